package schema_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions/schema"
)

var (
	types = []string{schema.TypeSession, schema.TypeMessage, schema.TypeCompaction, schema.TypeBranchSummary,
		schema.TypeCustom, schema.TypeCustomMessage, schema.TypeLabel, schema.TypeSessionInfo, schema.TypeModelChange,
		schema.TypeThinkingLevelChange, schema.TypeContextEdit, schema.TypeUsage}
	roles = []string{schema.RoleUser, schema.RoleAssistant, schema.RoleToolResult, schema.RoleBashExecution,
		schema.RoleCustom, schema.RoleSystem, schema.RoleBranchSummary, schema.RoleCompactionSummary, schema.RoleHookMessage}
	blocks = []string{schema.BlockText, schema.BlockThinking, schema.BlockToolCall, schema.BlockImage}
)

func TestIntern(t *testing.T) {
	for _, name := range append(types, roles...) {
		got, ok := schema.Intern([]byte(name))
		if !ok || got != name {
			t.Errorf("Intern(%q) = %q, %v", name, got, ok)
		}
	}
	for _, name := range []string{"", "Message", "messages", "text", "toolcall"} {
		if got, ok := schema.Intern([]byte(name)); ok {
			t.Errorf("Intern(%q) = %q, true", name, got)
		}
	}
}

// TestSchemaIsPis: the names are pi's. pi's session manager writes each
// entry type and no other ("text" is a block of the messages it builds);
// its core code writes or tests each role, and the roles it writes are
// ours; the content block types are the ones it tests blocks for.
func TestSchemaIsPis(t *testing.T) {
	core := filepath.Join(oracle.Dir(t), "node_modules/@earendil-works/pi-coding-agent/dist/core")
	read := func(glob string) string {
		files, _ := filepath.Glob(filepath.Join(core, glob))
		if len(files) == 0 {
			t.Fatalf("no %s in %s", glob, core)
		}
		var sb strings.Builder
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sb.Write(b)
		}
		return sb.String()
	}
	manager := read("session-manager.js")
	all := read("*.js") + read("compaction/*.js")
	found := func(src, field, op string) map[string]bool {
		out := map[string]bool{}
		re := regexp.MustCompile(field + op + `"([A-Za-z_]+)"`)
		for _, m := range re.FindAllStringSubmatch(src, -1) {
			out[m[1]] = true
		}
		return out
	}
	written := found(manager, "type", `: `)
	for _, typ := range types {
		if !written[typ] {
			t.Errorf("pi's session manager writes no entry of type %q", typ)
		}
	}
	for typ := range written {
		if !contains(types, typ) && typ != schema.BlockText {
			t.Errorf("pi's session manager writes type %q, which the schema lacks", typ)
		}
	}
	said := found(all, "role", `: `)
	tested := found(all, "role", ` === `)
	for _, role := range roles {
		if !said[role] && !tested[role] {
			t.Errorf("pi's core neither writes nor tests role %q", role)
		}
	}
	for role := range said {
		if !contains(roles, role) {
			t.Errorf("pi's core writes role %q, which the schema lacks", role)
		}
	}
	blockTests := found(all, "type", ` === `)
	for _, b := range blocks {
		if !blockTests[b] {
			t.Errorf("pi's core tests no block of type %q", b)
		}
	}
	t.Logf("types %v; roles written %v", keys(written), keys(said))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
