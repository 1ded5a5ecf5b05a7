package gen

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// StoreSpec describes a generated store: Sessions sessions spread round
// robin over Projects project folders, /home/user/pN in --home-user-pN--.
type StoreSpec struct {
	Sessions int
	Projects int
	Seed     int64
	// A session has MinEntries + MaxExtra·u² entries (u uniform in
	// [0,1)), except every BigEvery-th, which has BigEntries.
	MinEntries int
	MaxExtra   int
	BigEvery   int
	BigEntries int
	AvgBytes   int // rough line size; each session varies it by ±50%
	// Every NeedleEvery-th session ends with a user message holding Needle.
	NeedleEvery int
	Needle      string
}

// File is one generated session file.
type File struct {
	Path    string // relative to the store
	Project string
	ID      string
	Entries int
	Needle  bool
}

// Specs returns the sessions of a store, in order. They depend only on p.
func Specs(p StoreSpec) []Spec {
	r := rand.New(rand.NewSource(p.Seed))
	start := time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC)
	specs := make([]Spec, p.Sessions)
	for i := range specs {
		n := p.MinEntries + int(float64(p.MaxExtra)*sq(r.Float64()))
		if p.BigEvery > 0 && i%p.BigEvery == p.BigEvery/2 {
			n = p.BigEntries
		}
		var id [16]byte
		r.Read(id[:])
		id[6] = id[6]&0x0f | 0x40
		id[8] = id[8]&0x3f | 0x80
		s := Spec{
			ID:       fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:16]),
			Cwd:      fmt.Sprintf("/home/user/p%d", i%p.Projects),
			Start:    start.Add(time.Duration(i) * 17 * time.Minute),
			Seed:     r.Int63(),
			Entries:  n,
			AvgBytes: p.AvgBytes/2 + r.Intn(p.AvgBytes+1),
		}
		if p.NeedleEvery > 0 && i%p.NeedleEvery == p.NeedleEvery-1 {
			s.Needle = p.Needle
		}
		specs[i] = s
	}
	return specs
}

func sq(x float64) float64 { return x * x }

// Store writes the store p describes into dir and returns its files.
func Store(dir string, p StoreSpec) ([]File, error) {
	specs := Specs(p)
	files := make([]File, len(specs))
	errs := make([]error, len(specs))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				files[i], errs[i] = writeFile(dir, specs[i])
			}
		}()
	}
	for i := range specs {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

func writeFile(dir string, s Spec) (File, error) {
	proj := ProjectDir(s.Cwd)
	f := File{Path: filepath.Join(proj, FileName(s)), Project: proj, ID: s.ID, Entries: s.Entries, Needle: s.Needle != ""}
	if err := os.MkdirAll(filepath.Join(dir, proj), 0o755); err != nil {
		return f, err
	}
	out, err := os.Create(filepath.Join(dir, f.Path))
	if err != nil {
		return f, err
	}
	if err := Write(out, s); err != nil {
		out.Close()
		return f, err
	}
	return f, out.Close()
}

// Project writes n sessions of entries entries (lines of about avgBytes)
// into store, in the project folder of /home/user/NAME, --home-user-NAME--:
// session i starts at second i of 2025-05-12T10:00Z, is seeded with i, and
// its file is named by that time and s<i>.
func Project(store, name string, n, entries, avgBytes int) error {
	proj := filepath.Join(store, "--home-user-"+name+"--")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		return err
	}
	for i := range n {
		f, err := os.Create(filepath.Join(proj, fmt.Sprintf("2025-05-12T10-00-%02d-000Z_s%02d.jsonl", i, i)))
		if err != nil {
			return err
		}
		err = Write(f, Spec{ID: fmt.Sprintf("0196c3ef-e100-70f4-96f8-0000000000%02d", i), Cwd: "/home/user/" + name,
			Start: time.Date(2025, 5, 12, 10, 0, i, 0, time.UTC), Seed: int64(i), Entries: entries, AvgBytes: avgBytes})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Numbered writes n sessions of the given number of entries and average
// line size into the folder dir, named s000.jsonl, s001.jsonl…: the same
// session each time (see Session).
func Numbered(dir string, n, entries, avgBytes int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("s%03d.jsonl", i)))
		if err != nil {
			return err
		}
		err = Session(f, entries, avgBytes)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
