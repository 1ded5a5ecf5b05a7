package view

import (
	"strings"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
)

// The names of the mount's own files and folders, and which names of the
// store's can be project and session folders.

// Names at the root and in a project folder.
const (
	activeName = "active"
	eventsName = "events"
	trashName  = "trash"
	byIDName   = "by-id"
	byCwdName  = "by-cwd"
	newName    = "new"
	cwdName    = "cwd"
	latestName = "latest"
	usageName  = "usage"
	byNameName = "by-name"
	byFileName = "by-file"
)

// rootNames are the root's own names (no project folder can take them);
// projectNames a project folder's (no session file can take them).
var (
	rootNames    = map[string]bool{pifsName: true, byIDName: true, byCwdName: true, byFileName: true, newName: true, latestName: true, usageName: true, trashName: true, eventsName: true, activeName: true, searchName: true}
	projectNames = map[string]bool{cwdName: true, newName: true, latestName: true, usageName: true, byNameName: true, byFileName: true, errorsName: true, eventsName: true, activeName: true, searchName: true}
)

// Names in a session folder.
const (
	sessionFileName = "session.jsonl"
	headerName      = "header.json"
	infoName        = "info.json"
	contextName     = "context.json"
	transcriptName  = "transcript.md"
	htmlName        = "transcript.html"
	nameName        = "name"
	leafName        = "leaf"
	appendName      = "append"
	forkName        = "fork"
	errorsName      = "errors"
	currentName     = "current"
	entriesName     = "entries"
	branchesName    = "branches"
	treeName        = "tree"
	labelsName      = "labels"
	imagesName      = "images"
	parentName      = "parent"
	forksName       = "forks"
	promptsName     = "prompts.txt"
	filesTextName   = "files.txt"
	filesJSONName   = "files.json"
	changesName     = "changes"
	patchName       = "changes.patch"
	replyName       = "reply.md"
	modelName       = "model"
	thinkingName    = "thinking"
	treeTimesName   = "tree-times.txt"
)

// jsonExt ends the names of entry files.
const jsonExt = ".json"

// ActiveWindow is how recently a session's file must have been written for
// the session to be in active/.
const ActiveWindow = 10 * time.Minute

// validProject tells whether a name can be a project folder in the mount.
func validProject(name string) bool {
	return name != "" && name != "." && name != ".." && !rootNames[name] && !strings.ContainsRune(name, 0)
}

// validSessionName tells whether a session file name (without .jsonl) can
// be a session folder: names of a project folder's own files are taken.
func validSessionName(name string) bool {
	return name != "" && !projectNames[name]
}

// validTrashName tells whether a name in the trash can be a trashed
// session's folder.
func validTrashName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// inTrash tells whether n is a value of a trashed session.
func inTrash(n Node) bool { return n.scope().project == trashName }

// projectErrorsKey is the key of a project's errors file (refusals).
func projectErrorsKey(project string) string { return project + "/" }

// pathFileName names an entry by its position on the root→entry path
// (see names.PathName).
func pathFileName(pos int, e *sessions.Entry) string {
	return names.PathName(pos, e.Kind(), e.ID, jsonExt)
}
