package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
)

// piServer is one node process running internal/oracle/js/model.mjs: pi's
// own SessionManager kept open on the sessions it appends to, and dump.mjs
// run in that process, so a reference view costs no node start-up.
type piServer struct {
	t   testing.TB
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startPiServer(t testing.TB) *piServer {
	t.Helper()
	dir := oracle.Dir(t)
	js, err := oracle.JSDir()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", js+"/model.mjs")
	cmd.Env = append(os.Environ(), "PIFS_ORACLE_DIR="+dir)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &piServer{t: t, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return s
}

func (s *piServer) call(req map[string]any) []byte {
	s.t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		s.t.Fatalf("model.mjs: %v", err)
	}
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("model.mjs: %v", err)
	}
	var e struct{ Error *string }
	if json.Unmarshal(line, &e) == nil && e.Error != nil {
		s.t.Fatalf("model.mjs %s: %s", b, *e.Error)
	}
	return line
}

// dump is oracle.Dump of file (pi reads a copy), answered by the server.
func (s *piServer) dump(file string) *oracle.View {
	s.t.Helper()
	v, err := oracle.ParseView(s.call(map[string]any{"op": "dump", "file": file}))
	if err != nil {
		s.t.Fatal(err)
	}
	return v
}

// append has pi's SessionManager, open on file, append an entry of kind
// (see model.mjs) and returns its id.
func (s *piServer) append(file string, req map[string]any) string {
	s.t.Helper()
	req["op"], req["file"] = "pi", file
	var r struct{ ID string }
	if err := json.Unmarshal(s.call(req), &r); err != nil {
		s.t.Fatal(err)
	}
	return r.ID
}

// reopen makes pi open file again on its next append, as a restarted pi
// would (after the file was truncated or rewritten under it).
func (s *piServer) reopen(file string) {
	s.t.Helper()
	s.call(map[string]any{"op": "reopen", "file": file})
}
