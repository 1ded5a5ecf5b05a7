package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
)

// nearIDs are session ids that differ late, in case only, or by being a
// prefix of one another.
var nearIDs = []string{
	"0196c3ef-e100-70f4-96f8-c0716d596b55",
	"0196c3ef-e100-70f4-96f8-c0716d596b56",
	"0196c3ef-e100-70f4-96f8-c0716d597000",
	"0196c3ef-e101-70f4-96f8-c0716d596b55",
	"abc", "abcd", "abce", "ABC", "abd-x",
}

// prefixStore writes one session per id: in a project folder each
// (default) or flat at the top. File names carry other ids, so that a
// match on the name would show.
func prefixStore(t *testing.T, store string, flat bool) map[string]string {
	t.Helper()
	files := map[string]string{}
	for i, id := range nearIDs {
		cwd := fmt.Sprintf("/proj%d", i%3)
		dir := filepath.Join(store, ProjectFolder(cwd))
		if flat {
			dir = store
		}
		os.MkdirAll(dir, 0o755)
		name := fmt.Sprintf("2024-01-0%dT00-00-00-000Z_%s.jsonl", i%9+1, nearIDs[(i+1)%len(nearIDs)])
		data := fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":"2024-01-01T00:00:00.000Z","cwd":%q}`+"\n"+
			`{"type":"message","id":"m1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}`+"\n", id, cwd)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		files[id] = p
	}
	return files
}

// prefixes are the lookups tried: every id whole and cut, in other case,
// and ids no session has.
func prefixes() []string {
	set := map[string]bool{"0": true, "0196c3ef-e10": true, "zzz": true, "abcde": true, "Abc": true, "ab": true, "a": true, "A": true}
	for _, id := range nearIDs {
		for n := 1; n <= len(id); n++ {
			set[id[:n]] = true
		}
		set[strings.ToUpper(id)] = true
	}
	var out []string
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// TestByIDPrefix: an exact id wins; a prefix of one id finds it; one of
// several is refused naming them; none is fs.ErrNotExist; case matters,
// and file names do not. Lookups after the first read nothing.
func TestByIDPrefix(t *testing.T) {
	store := t.TempDir()
	files := prefixStore(t, store, false)
	x := NewIndex(store)
	for _, p := range prefixes() {
		var want []string
		for _, id := range nearIDs {
			if strings.HasPrefix(id, p) {
				want = append(want, id)
			}
		}
		if slices.Contains(nearIDs, p) {
			want = []string{p}
		}
		slices.Sort(want)
		f, err := x.ByIDPrefix(p)
		switch len(want) {
		case 0:
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%q: %v, %v; want not found", p, f, err)
			}
		case 1:
			if err != nil || f.Path != files[want[0]] {
				t.Errorf("%q: %v, %v; want %s", p, f, err, files[want[0]])
			}
		default:
			var pe *PrefixError
			if !errors.As(err, &pe) || !errors.Is(err, ErrAmbiguous) || pe.Count != len(want) {
				t.Fatalf("%q: %v, %v; want %d matches", p, f, err, len(want))
			}
			for i, m := range pe.Matches {
				if m.Header.ID != want[i] || !strings.Contains(err.Error(), m.Header.ID+" ("+m.Project+"/"+m.Name+")") {
					t.Errorf("%q: match %d is %s, want %s (%v)", p, i, m.Header.ID, want[i], err)
				}
			}
			if len(pe.Matches) != min(len(want), shownMatches) {
				t.Errorf("%q names %d matches", p, len(pe.Matches))
			}
		}
	}
	before := x.Stats()
	for _, p := range prefixes() {
		x.ByIDPrefix(p)
	}
	if after := x.Stats(); after != before {
		t.Errorf("lookups read the store: %d stats, %d headers, %d folders more", after.Stats-before.Stats, after.Headers-before.Headers, after.FoldersRead-before.FoldersRead)
	}
}

// TestByIDPrefixCurrent: the lookup follows the store: a new session is
// found, one gone is not, an append changes nothing, and a session whose
// id sorts anywhere is found (the sorted ids are rebuilt).
func TestByIDPrefixCurrent(t *testing.T) {
	store := t.TempDir()
	files := prefixStore(t, store, false)
	x := NewIndex(store)
	if f, err := x.ByIDPrefix("abce"); err != nil || f.Path != files["abce"] {
		t.Fatalf("abce: %v %v", f, err)
	}
	// An append: a new version of the file, the same id.
	fh, _ := os.OpenFile(files["abce"], os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"type":"message","id":"m2","parentId":"m1","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"user","content":"more"}}` + "\n")
	fh.Close()
	x.Update(files["abce"])
	if f, err := x.ByIDPrefix("abce"); err != nil || f.Path != files["abce"] {
		t.Errorf("abce after an append: %v %v", f, err)
	}
	// Gone.
	os.Remove(files["abce"])
	x.Update(files["abce"])
	if _, err := x.ByIDPrefix("abce"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("abce after it went: %v", err)
	}
	if f, err := x.ByIDPrefix("abc"); err != nil || f.Path != files["abc"] {
		t.Errorf("abc: %v %v", f, err)
	}
	// New ids, one sorting last (as pi's UUIDv7 ids do), one in the middle.
	for _, id := range []string{"zz-new", "abq-mid"} {
		p := filepath.Join(store, "--proj0--", id+".jsonl")
		os.WriteFile(p, []byte(fmt.Sprintf(`{"type":"session","version":3,"id":%q,"cwd":"/proj0"}`+"\n", id)), 0o644)
		x.Update(p)
		if f, err := x.ByIDPrefix(id[:len(id)-1]); err != nil || f.Path != p {
			t.Errorf("%s: %v %v", id, f, err)
		}
	}
	var pe *PrefixError
	if _, err := x.ByIDPrefix("ab"); !errors.As(err, &pe) || pe.Count != 4 {
		t.Errorf("ab: %v", err) // abc, abcd, abd-x, abq-mid
	}
}

// TestByIDPrefixLikePi: on the same store, in pi's default layout and in
// a flat one, every lookup that pifs answers with one session is the
// session `pi --fork <prefix>` (and --session) starts from; where pifs
// names several, pi picks one of them; where pifs finds none, so does pi.
// pi runs from a folder with no session, so that no match is "local".
func TestByIDPrefixLikePi(t *testing.T) {
	oracle.Dir(t)
	for _, layout := range []string{"default", "flat"} {
		t.Run(layout, func(t *testing.T) {
			agent := t.TempDir()
			store := filepath.Join(agent, "sessions")
			flat := layout == "flat"
			prefixStore(t, store, flat)
			cwd := t.TempDir()
			env := []string{"PI_CODING_AGENT_DIR=" + agent}
			sessionDir := ""
			if flat {
				sessionDir = store
			}
			list := prefixes()
			pi := oracle.SessionArg(t, cwd, sessionDir, env, list...)
			x := NewIndex(store)
			for _, p := range list {
				f, err := x.ByIDPrefix(p)
				var pe *PrefixError
				switch {
				case err == nil:
					if pi[p] != f.Path {
						t.Errorf("%q: pifs %s, pi %q", p, f.Path, pi[p])
					}
				case errors.As(err, &pe):
					var paths []string
					for _, m := range pe.Matches {
						paths = append(paths, m.Path)
					}
					if !slices.Contains(paths, pi[p]) {
						t.Errorf("%q: pi takes %q, not one of the matches pifs names: %v", p, pi[p], err)
					}
				case errors.Is(err, fs.ErrNotExist):
					if pi[p] != "" {
						t.Errorf("%q: pifs finds none, pi %s", p, pi[p])
					}
				default:
					t.Errorf("%q: %v", p, err)
				}
			}
		})
	}
}

// BenchmarkPrefixIndex: a lookup by prefix among 100,000 session ids, once
// they are sorted.
func BenchmarkPrefixIndex(b *testing.B) {
	live := map[string][]*File{}
	var p prefixIndex
	for i := 0; i < 100000; i++ {
		id := NewSessionID()
		live[id] = []*File{{}}
		p.add(id)
	}
	ids := make([]string, 0, len(live))
	for id := range live {
		ids = append(ids, id)
	}
	p.starting("", live)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := ids[i%len(ids)]
		if n := len(p.starting(id[:24], live)); n != 1 {
			b.Fatalf("%d matches", n)
		}
	}
}
