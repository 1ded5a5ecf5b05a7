package render

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// cdp drives a headless chromium over the DevTools protocol on a pipe
// (--remote-debugging-pipe: commands on its fd 3, answers on its fd 4,
// each a JSON message ended by a NUL), without a WebSocket library. It
// clicks as a user clicks (mouse events at an element's place) in a page
// whose scripts are turned off.
type cdp struct {
	t       *testing.T
	cmd     *exec.Cmd
	w       *os.File
	r       *bufio.Reader
	id      int
	session string
	events  []cdpMessage
}

type cdpMessage struct {
	ID     int             `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
	SessionID string `json:"sessionId"`
}

// startCDP starts chromium with a page of width×height CSS pixels and
// JavaScript off, and attaches to it.
func startCDP(t *testing.T, bin string, width, height int) *cdp {
	return startCDPWith(t, bin, width, height, false)
}

// startCDPWith is startCDP, with the pages' scripts on when scripts is
// set.
func startCDPWith(t *testing.T, bin string, width, height int, scripts bool) *cdp {
	t.Helper()
	toChrome, ours, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	theirs, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome} // fds 3 and 4
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toChrome.Close()
	fromChrome.Close()
	c := &cdp{t: t, cmd: cmd, w: ours, r: bufio.NewReader(theirs)}
	t.Cleanup(func() {
		ours.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		theirs.Close()
	})
	var target struct{ TargetID string }
	c.call("Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct{ SessionID string }
	c.call("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	c.session = att.SessionID
	c.call("Page.enable", nil, nil)
	c.call("Emulation.setScriptExecutionDisabled", map[string]any{"value": !scripts}, nil)
	c.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	return c
}

// call sends a command to the page (to the browser before attaching) and
// decodes its result into out.
func (c *cdp) call(method string, params any, out any) {
	c.t.Helper()
	if err := c.try(method, params, out); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// try is call that returns the protocol's error.
func (c *cdp) try(method string, params any, out any) error {
	c.id++
	msg := map[string]any{"id": c.id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if c.session != "" {
		msg["sessionId"] = c.session
	}
	b, _ := json.Marshal(msg)
	if _, err := c.w.Write(append(b, 0)); err != nil {
		return err
	}
	for {
		m, err := c.read()
		if err != nil {
			return err
		}
		if m.ID != c.id {
			if m.Method != "" {
				c.events = append(c.events, m)
			}
			continue
		}
		if m.Error != nil {
			return fmt.Errorf("%s", m.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	}
}

func (c *cdp) read() (cdpMessage, error) {
	b, err := c.r.ReadBytes(0)
	if err != nil {
		return cdpMessage{}, fmt.Errorf("reading from chromium: %w", err)
	}
	var m cdpMessage
	err = json.Unmarshal(b[:len(b)-1], &m)
	return m, err
}

// waitEvent reads until an event of that method arrives (or one already
// did since the last wait).
func (c *cdp) waitEvent(method string) {
	c.t.Helper()
	for i, e := range c.events {
		if e.Method == method {
			c.events = append(c.events[:i:i], c.events[i+1:]...)
			return
		}
	}
	deadline := time.AfterFunc(time.Minute, func() { c.cmd.Process.Kill() })
	defer deadline.Stop()
	for {
		m, err := c.read()
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", method, err)
		}
		if m.Method == method {
			return
		}
		if m.Method != "" {
			c.events = append(c.events, m)
		}
	}
}

// open loads a file and waits for it to load.
func (c *cdp) open(file string) {
	c.t.Helper()
	c.events = nil
	c.call("Page.navigate", map[string]any{"url": "file://" + file}, nil)
	c.waitEvent("Page.loadEventFired")
}

// node is the id of the first element that selector selects, 0 for none.
func (c *cdp) node(selector string) int {
	c.t.Helper()
	var doc struct{ Root struct{ NodeID int } }
	c.call("DOM.getDocument", map[string]any{"depth": 0}, &doc)
	var q struct{ NodeID int }
	c.call("DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": selector}, &q)
	return q.NodeID
}

// click scrolls the element selector selects into view and clicks its
// middle with the mouse.
func (c *cdp) click(selector string) {
	c.t.Helper()
	n := c.node(selector)
	if n == 0 {
		c.t.Fatalf("no element %s to click", selector)
	}
	c.call("DOM.scrollIntoViewIfNeeded", map[string]any{"nodeId": n}, nil)
	var q struct{ Quads [][]float64 }
	c.call("DOM.getContentQuads", map[string]any{"nodeId": n}, &q)
	if len(q.Quads) == 0 {
		c.t.Fatalf("%s has no box to click", selector)
	}
	quad := q.Quads[0]
	x, y := (quad[0]+quad[4])/2, (quad[1]+quad[5])/2
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		c.call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}, nil)
	}
}

// screenshot is a PNG of the viewport.
func (c *cdp) screenshot() []byte {
	c.t.Helper()
	var s struct{ Data string }
	c.call("Page.captureScreenshot", map[string]any{"format": "png"}, &s)
	b, err := base64.StdEncoding.DecodeString(s.Data)
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// url is the page's address now (its fragment after a click on a link).
func (c *cdp) url() string {
	c.t.Helper()
	// The document's own address: the browser's navigation history hears
	// of a fragment navigation from the page a moment later, so reading it
	// right after a click may still give the address before.
	var u string
	c.eval(`location.href`, &u)
	return u
}

// eval evaluates a JavaScript expression in the inspector (the page's
// own scripts stay off) and decodes its value into out.
func (c *cdp) eval(expr string, out any) {
	c.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage
		}
		ExceptionDetails *struct{ Text string }
	}
	c.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	if r.ExceptionDetails != nil {
		c.t.Fatalf("evaluating %s: %s", expr, r.ExceptionDetails.Text)
	}
	if err := json.Unmarshal(r.Result.Value, out); err != nil {
		c.t.Fatalf("evaluating %s: %v (%s)", expr, err, r.Result.Value)
	}
}
