package trash

import (
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
)

// trashCLI checks that Debian's trash-cli is installed: it is the
// reference these tests compare with, required (PIFS_REQUIRE_ORACLE=1)
// where the pi oracle is.
func trashCLI(t *testing.T) {
	t.Helper()
	for _, prog := range []string{"trash-put", "trash-list", "trash-restore"} {
		if _, err := exec.LookPath(prog); err != nil {
			if os.Getenv(oracle.RequireEnv) == "1" {
				t.Fatalf("%s not found (apt-get install trash-cli) and %s=1", prog, oracle.RequireEnv)
			}
			t.Skipf("%s not found: apt-get install trash-cli", prog)
		}
	}
}

// run runs a trash-cli command with the test's home trash.
func run(t *testing.T, tr *Trash, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Dir(tr.Home))
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// snapshot is every file under dir with its bytes, and every folder.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func paths(list []oracle.Listed) []string {
	var out []string
	for _, l := range list {
		out = append(out, l.Path)
	}
	return out
}

// TestWithTrashCLIAndPi trashes a session pi wrote, in pi's default
// layout and in its flat one, on the home trash's file system and on a
// file system of its own: trash-list lists it and pi's session list no
// longer does; trash-restore puts it back and pi lists it again. Then
// trash-put trashes it, pifs lists it and restores it. Each time the store
// ends byte for byte as it was. (pi's list is asked on the home trash's
// file system only: where the trash is does not change what it reads.)
func TestWithTrashCLIAndPi(t *testing.T) {
	trashCLI(t)
	oracle.Dir(t)
	for _, layout := range []string{"default", "flat"} {
		for _, where := range []string{"home", "top"} {
			t.Run(layout+"-"+where, func(t *testing.T) {
				tr := homeTrash(t)
				base := t.TempDir()
				if where == "top" {
					base = tmpfs(t)
				}
				store := filepath.Join(base, "sessions")
				tr.Outside = store
				var piList func() []string
				var file string
				if layout == "default" {
					oracle.Corpus(t, store)
					piList = func() []string { return paths(oracle.ListDefault(t, store)) }
					des, _ := os.ReadDir(filepath.Join(store, "--home-user-proj--"))
					file = filepath.Join(store, "--home-user-proj--", des[0].Name())
				} else {
					files := oracle.FlatCorpus(t, store)
					piList = func() []string { return paths(oracle.ListAll(t, store)) }
					file = files[0]
				}
				// Without pi, the list is what is in the store.
				list := func() []string {
					if where == "home" {
						return piList()
					}
					var out []string
					for _, p := range []string{filepath.Join(store, "*.jsonl"), filepath.Join(store, "*", "*.jsonl")} {
						m, _ := filepath.Glob(p)
						out = append(out, m...)
					}
					return out
				}
				before := snapshot(t, store)
				listed := list()
				if !slices.Contains(listed, file) {
					t.Fatalf("pi does not list %s before: %q", file, listed)
				}

				// pifs trashes, trash-cli sees it and restores it.
				it, err := tr.Put(file)
				if err != nil {
					t.Fatal(err)
				}
				if where == "top" && !strings.HasPrefix(it.Dir, base+"/.Trash") {
					t.Errorf("trashed into %s, not the top of %s", it.Dir, base)
				}
				if out := run(t, tr, "", "trash-list"); !strings.Contains(out, " "+file+"\n") {
					t.Errorf("trash-list does not list %s:\n%s", file, out)
				}
				if got := list(); slices.Contains(got, file) || len(got) != len(listed)-1 {
					t.Errorf("pi lists after the trash: %q", got)
				}
				out := run(t, tr, "0\n", "trash-restore", store)
				if _, err := os.Stat(file); err != nil {
					t.Fatalf("trash-restore did not restore %s: %v\n%s", file, err, out)
				}
				if got := list(); !sameSet(got, listed) {
					t.Errorf("pi lists after trash-restore\n%q\nwant\n%q", got, listed)
				}
				if after := snapshot(t, store); !maps.Equal(after, before) {
					t.Errorf("the store changed after pifs's trash and trash-restore")
				}
				if items, err := tr.List(store); err != nil || len(items) != 0 {
					t.Errorf("List after trash-restore: %+v %v", items, err)
				}

				// trash-put trashes, pifs lists it and restores it.
				run(t, tr, "", "trash-put", file)
				if got := list(); slices.Contains(got, file) {
					t.Errorf("pi lists after trash-put: %q", got)
				}
				items, err := tr.List(store)
				if err != nil || len(items) != 1 || items[0].Original != file {
					t.Fatalf("List after trash-put: %+v %v", items, err)
				}
				if err := tr.Restore(items[0]); err != nil {
					t.Fatal(err)
				}
				if got := list(); !sameSet(got, listed) {
					t.Errorf("pi lists after pifs's restore\n%q\nwant\n%q", got, listed)
				}
				if after := snapshot(t, store); !maps.Equal(after, before) {
					t.Errorf("the store changed after trash-put and pifs's restore")
				}
				if out := run(t, tr, "", "trash-list"); strings.Contains(out, file) {
					t.Errorf("trash-list still lists %s:\n%s", file, out)
				}
			})
		}
	}
}

// sameSet tells whether two lists hold the same names (pi orders its list
// by modification time, which a restore keeps but ties may not).
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
