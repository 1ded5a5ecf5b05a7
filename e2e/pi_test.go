package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions/schema"
)

// decodeJSON decodes for comparison; numbers compare as float64.
func decodeJSON(t *testing.T, what string, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%.300s", what, err, b)
	}
	return v
}

func readMount(t *testing.T, path string) []byte {
	t.Helper()
	return []byte(readText(t, path))
}

// TestMountMatchesPi mounts a store written by pi itself and checks, for
// every session, that what the mount shows is pi's view: context.json at the
// leaf and at every tip, the branches listed and the entries on each, the
// tree, labels, name, leaf and info.json.
func TestMountMatchesPi(t *testing.T) {
	store := t.TempDir()
	oracle.Corpus(t, store)
	mnt := testMount(t, store)
	projects, _ := os.ReadDir(store)
	sessions := 0
	for _, p := range projects {
		files, _ := filepath.Glob(filepath.Join(store, p.Name(), "*.jsonl"))
		for _, f := range files {
			sessions++
			name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
			t.Run(name, func(t *testing.T) {
				checkSessionAgainstPi(t, f, filepath.Join(mnt, p.Name(), name))
			})
		}
	}
	if sessions < 10 {
		t.Fatalf("only %d sessions", sessions)
	}
}

func checkSessionAgainstPi(t *testing.T, file, dir string) {
	pi := oracle.Dump(t, file, true)
	if !reflect.DeepEqual(decodeJSON(t, "context.json", readMount(t, filepath.Join(dir, "context.json"))), decodeJSON(t, "pi context", pi.ContextAtLeaf)) {
		t.Error("context.json differs from pi's context at the leaf")
	}
	// branches/ lists exactly pi's tips, each with pi's path and context.
	ents, err := os.ReadDir(filepath.Join(dir, "branches"))
	if err != nil {
		t.Fatal(err)
	}
	var listed, tips []string
	for _, e := range ents {
		listed = append(listed, e.Name())
	}
	for _, tip := range pi.Tips {
		tips = append(tips, names.Encode(tip.(string)))
	}
	sort.Strings(tips)
	if !reflect.DeepEqual(listed, tips) {
		t.Errorf("branches/ lists %v, pi's tips are %v", listed, tips)
	}
	for _, tip := range pi.Tips {
		id := tip.(string)
		bdir := filepath.Join(dir, "branches", names.Encode(id))
		if !reflect.DeepEqual(decodeJSON(t, "branch context", readMount(t, filepath.Join(bdir, "context.json"))), decodeJSON(t, "pi", pi.Contexts[id])) {
			t.Errorf("branches/%s/context.json differs from pi's context there", id)
		}
		files, _ := os.ReadDir(bdir)
		var listedNames []string
		for _, f := range files {
			listedNames = append(listedNames, f.Name())
		}
		path := pathIDs(listedNames)
		var want []string
		for _, p := range pi.Paths[id] {
			want = append(want, p.(string))
		}
		if !reflect.DeepEqual(path, want) {
			t.Errorf("branches/%s holds %v, pi's path is %v", id, path, want)
		}
	}
	// Any entry resolves under branches/, with pi's context for it.
	for id, ctx := range pi.Contexts {
		got := readMount(t, filepath.Join(dir, "branches", names.Encode(id), "context.json"))
		if !reflect.DeepEqual(decodeJSON(t, "ctx", got), decodeJSON(t, "pi", ctx)) {
			t.Errorf("branches/%s/context.json (an interior entry) differs from pi", id)
		}
		break // one is enough here; tree/ conformance covers every id
	}
	// tree/ holds every entry of pi's tree exactly once.
	var inTree []string
	filepath.WalkDir(filepath.Join(dir, "tree"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			parts := strings.SplitN(strings.TrimSuffix(d.Name(), ".json"), "-", 3)
			inTree = append(inTree, parts[len(parts)-1])
		}
		return err
	})
	var all []string
	for id := range pi.Paths {
		all = append(all, id)
	}
	sort.Strings(inTree)
	sort.Strings(all)
	if !reflect.DeepEqual(inTree, all) {
		t.Errorf("tree/ holds %d entries, pi's tree %d", len(inTree), len(all))
	}
	// labels/ links to the labelled entries.
	got := map[string]string{}
	links, _ := os.ReadDir(filepath.Join(dir, "labels"))
	for _, l := range links {
		target, err := os.Readlink(filepath.Join(dir, "labels", l.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[strings.TrimSuffix(filepath.Base(target), ".json")] = l.Name()
		if _, err := os.Stat(filepath.Join(dir, "labels", l.Name())); err != nil {
			t.Errorf("labels/%s does not resolve: %v", l.Name(), err)
		}
	}
	want := map[string]string{}
	for id, raw := range pi.Labels {
		var s string
		json.Unmarshal(raw, &s)
		want[id] = names.Encode(s)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels/ %v, pi's labels %v", got, want)
	}
	// name and leaf.
	name := strings.TrimSuffix(string(readMount(t, filepath.Join(dir, "name"))), "\n")
	if pi.Name != nil && name != *pi.Name || pi.Name == nil && name != "" {
		t.Errorf("name %q, pi %v", name, pi.Name)
	}
	leaf := strings.TrimSuffix(string(readMount(t, filepath.Join(dir, "leaf"))), "\n")
	if leaf != fmt.Sprint(pi.LeafID) {
		t.Errorf("leaf %q, pi %v", leaf, pi.LeafID)
	}
	// info.json: pi's session-list fields and /session usage.
	var info struct {
		ID, Cwd, FirstMessage, Created, Modified string
		Name                                     *string
		ParentSession                            any
		MessageCount, EntryCount                 int
		Usage                                    schema.Usage
	}
	if err := json.Unmarshal(readMount(t, filepath.Join(dir, "info.json")), &info); err != nil {
		t.Fatal(err)
	}
	if pi.Info != nil {
		if info.ID != fmt.Sprint(pi.Info.ID) || info.Cwd != pi.Info.Cwd || info.MessageCount != pi.Info.MessageCount ||
			info.FirstMessage != pi.Info.FirstMessage || (pi.Info.Created != nil && info.Created != *pi.Info.Created) ||
			(pi.Info.Modified != nil && info.Modified != *pi.Info.Modified) || !reflect.DeepEqual(info.Name, pi.Info.Name) ||
			fmt.Sprint(info.ParentSession) != fmt.Sprint(pi.Info.ParentSessionPath) {
			t.Errorf("info.json %+v\npi's list %+v", info, *pi.Info)
		}
	}
	if pi.Usage != nil && info.Usage != *pi.Usage {
		t.Errorf("usage %+v, pi %+v", info.Usage, *pi.Usage)
	}
	if info.EntryCount != len(pi.Entries) {
		t.Errorf("entryCount %d, pi %d", info.EntryCount, len(pi.Entries))
	}
}

// TestLiveAppendByPi: while the mount is up, a node process appends through
// pi's own SessionManager; each new entry shows in the mount within a second
// (polled), never with a stale size.
func TestLiveAppendByPi(t *testing.T) {
	store := t.TempDir()
	oracle.Corpus(t, store)
	files, _ := filepath.Glob(filepath.Join(store, "*", "*.jsonl"))
	file := files[0]
	name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
	mnt := testMount(t, store)
	dir := filepath.Join(mnt, filepath.Base(filepath.Dir(file)), name)
	readMount(t, filepath.Join(dir, "context.json")) // parsed before pi starts

	appendByPi := piAppender(t, file)
	for i := 0; i < 5; i++ {
		id := appendByPi(fmt.Sprintf("live message %d", i))
		start := time.Now()
		eventually(t, "entry "+id+" in entries/", func() (bool, string) {
			_, err := os.Stat(filepath.Join(dir, "entries", id+".json"))
			return err == nil, fmt.Sprint(err)
		})
		eventually(t, "leaf", func() (bool, string) {
			b, _ := os.ReadFile(filepath.Join(dir, "leaf"))
			return strings.TrimSpace(string(b)) == id, string(b)
		})
		raw, _ := os.ReadFile(file)
		eventually(t, "session.jsonl size", func() (bool, string) {
			fi, err := os.Stat(filepath.Join(dir, "session.jsonl"))
			return err == nil && fi.Size() == int64(len(raw)), fmt.Sprint(fi.Size(), " vs ", len(raw))
		})
		if got := readMount(t, filepath.Join(dir, "session.jsonl")); string(got) != string(raw) {
			t.Fatalf("session.jsonl is not the file (%d vs %d bytes)", len(got), len(raw))
		}
		ctx := readMount(t, filepath.Join(dir, "context.json"))
		if !strings.Contains(string(ctx), fmt.Sprintf("live message %d", i)) {
			t.Fatalf("context.json lacks message %d", i)
		}
		t.Logf("entry %d visible after %v", i, time.Since(start).Round(time.Millisecond))
	}
}

// oracleCommand prepares node to run a script with the pi oracle at hand.
func oracleCommand(t *testing.T, script string, args ...string) *exec.Cmd {
	dir := oracle.Dir(t)
	cmd := exec.Command("node", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "PIFS_ORACLE_DIR="+dir)
	return cmd
}
