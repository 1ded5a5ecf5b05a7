package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

var appendRaceLines = flag.Int("pifs.appendrace.lines", 0, "lines each of TestConcurrentAppendsChain's 4 writers appends (default 300; the load run is 2500)")

// TestConcurrentAppendsChain: four shell loops append through the binary's
// mount to one session, one transaction a line (`echo "$l" > append`),
// while a fifth reads context.json over and over. Transactions through the
// mount see each other: each is chained under the leaf as it is when it
// commits, so the lines form one chain, none lost or doubled, and the
// context at the end holds every line. Also with a cache too small to keep
// the session while another session is read, so that it leaves the cache
// in the middle of transactions.
func TestConcurrentAppendsChain(t *testing.T) {
	t.Run("cache", func(t *testing.T) { concurrentAppends(t, false) })
	t.Run("evicted", func(t *testing.T) { concurrentAppends(t, true) })
}

func concurrentAppends(t *testing.T, evict bool) {
	n := *appendRaceLines
	if n == 0 {
		n = 300
	}
	const writers = 4
	store, file := writeStore(t)
	var flags []string
	other := ""
	if evict {
		// Another session, read all along, pushes this one out of a
		// cache of 1 KiB.
		const id = "99999999-2222-3333-4444-555555555555"
		name := "2024-01-02T00-00-00-000Z_" + id
		text := strings.Replace(strings.Join(fixLines, "\n")+"\n", fixID, id, 1)
		if err := os.WriteFile(filepath.Join(filepath.Dir(file), name+".jsonl"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		flags = append(flags, "--cache-size", "1KiB")
		other = name
	}
	mnt, _ := daemon(t, store, flags...)
	s := sessionPath(mnt)

	var wg sync.WaitGroup
	errs := make(chan string, writers+1)
	for k := 0; k < writers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sh := command(s, "sh", "-c", `i=0; while [ $i -lt $1 ]; do echo "w$0 $i" > append || exit 1; i=$((i+1)); done`, strconv.Itoa(k), strconv.Itoa(n))
			if out, err := sh.CombinedOutput(); err != nil {
				errs <- fmt.Sprintf("writer %d: %v\n%s", k, err, out)
			}
		}()
	}
	var stop atomic.Bool
	reads := 0
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for !stop.Load() {
			if other != "" {
				os.ReadFile(filepath.Join(mnt, fixProject, other, "context.json"))
			}
			data, err := os.ReadFile(filepath.Join(s, "context.json"))
			if err != nil || !json.Valid(data) {
				errs <- fmt.Sprintf("context.json read %d: %v: %.200q", reads, err, data)
				return
			}
			reads++
		}
	}()
	wg.Wait()
	stop.Store(true)
	<-readerDone
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	// The file: every line once, and the lines one chain.
	type entry struct {
		ID, ParentID string
		Text         string
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	children := map[string]int{}
	var added []entry
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'}) {
		var e struct {
			ID       string
			ParentID *string
			Message  struct {
				Role    string
				Content json.RawMessage
			}
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("a line is not JSON: %.200q", line)
		}
		if e.ParentID != nil {
			children[*e.ParentID]++
		}
		if text := userText(e.Message.Content); e.Message.Role == "user" && strings.HasPrefix(text, "w") {
			added = append(added, entry{e.ID, *e.ParentID, text})
		}
	}
	seen := map[string]int{}
	breaks := 0
	for _, e := range added {
		seen[e.Text]++
		if children[e.ParentID] != 1 {
			breaks++
		}
	}
	lost, doubled := 0, 0
	for k := 0; k < writers; k++ {
		for i := 0; i < n; i++ {
			switch seen[fmt.Sprintf("w%d %d", k, i)] {
			case 0:
				lost++
			case 1:
			default:
				doubled++
			}
		}
	}

	// The context at the end holds every line.
	var ctx struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	data, err = os.ReadFile(filepath.Join(s, "context.json"))
	if err != nil || json.Unmarshal(data, &ctx) != nil {
		t.Fatalf("context.json: %v", err)
	}
	inContext := 0
	for _, m := range ctx.Messages {
		if m.Role == "user" && strings.HasPrefix(userText(m.Content), "w") {
			inContext++
		}
	}
	t.Logf("%d writers × %d lines, %d reads of context.json: %d lost, %d doubled, %d chain breaks (entries whose parent has another child), %d of %d lines in context.json",
		writers, n, reads, lost, doubled, breaks, inContext, writers*n)
	if lost != 0 || doubled != 0 || breaks != 0 || inContext != writers*n {
		t.Errorf("want 0 lost, 0 doubled, 0 chain breaks and every line in context.json")
	}
	if entries, _ := piOpen(t, file); entries != len(fixLines)-1+writers*n {
		t.Errorf("pi reads %d entries, want %d", entries, len(fixLines)-1+writers*n)
	}
}

// userText is the text of a user message's content: a string, or its
// first text block.
func userText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var blocks []struct{ Text string }
	if json.Unmarshal(content, &blocks) == nil && len(blocks) > 0 {
		return blocks[0].Text
	}
	return ""
}
