// Package fakemodel is a model server for tests: an HTTP server on
// 127.0.0.1 that speaks the streaming chat completions API (what pi calls
// "openai-completions"), answers each request from a script and records
// every request body, so that a test runs the real pi CLI offline and checks
// what pi sent the model.
//
// pi is pointed at it by a custom provider in $PI_CODING_AGENT_DIR/models.json
// (see ModelsJSON); internal/oracle's Agent writes that file and runs pi.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Provider and Model are the names ModelsJSON gives the fake provider and
// its one model: `pi --provider fake --model m`.
const (
	Provider = "fake"
	Model    = "m"
)

// Costs are the model's prices in USD per million tokens, as models.json
// gives them; pi computes each message's cost from them and the usage.
type Costs struct {
	Input, Output, CacheRead, CacheWrite float64
}

// DefaultCosts are the prices ModelsJSON declares: large enough that a few
// tokens give a cost that is not zero.
func DefaultCosts() Costs { return Costs{Input: 1000, Output: 2000, CacheRead: 100, CacheWrite: 0} }

// Usage is the token counts a reply reports (the chunk pi reads when it asks
// for stream_options.include_usage).
type Usage struct {
	// Prompt is prompt_tokens; Cached of them are cache reads.
	Prompt, Cached, Completion int
}

// ToolCall is a function call in a reply.
type ToolCall struct {
	ID, Name string
	// Arguments is the JSON object of the call's arguments.
	Arguments string
}

// Reply is one answer of the server.
type Reply struct {
	// Text is streamed as content deltas, a few bytes per chunk.
	Text string
	// ToolCalls follow the text.
	ToolCalls []ToolCall
	// FinishReason is the stream's finish_reason: "stop", "length",
	// "tool_calls"… ("" gives "tool_calls" when there are tool calls, "stop"
	// otherwise).
	FinishReason string
	// Usage is reported in the last chunk; a zero Usage gives counts
	// derived from the request and the text (a quarter of the prompt
	// cached).
	Usage Usage
	// Status, when not 0 or 200, answers with that HTTP status and Text as
	// the error message instead of a stream.
	Status int
}

// Request is one request the server received.
type Request struct {
	Method, Path string
	Header       http.Header
	// Body is the request body as sent.
	Body []byte
}

// Message is one message of a chat completions request, with its text:
// a string content as is, a list of parts as their text parts joined by
// "\n".
type Message struct {
	Role string
	Text string
	// ToolCalls are the names of an assistant message's tool calls.
	ToolCalls []string
	// ToolCallID is a tool message's call id.
	ToolCallID string
}

// Messages decodes the messages of a request body.
func (r Request) Messages() ([]Message, error) {
	var body struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		return nil, fmt.Errorf("fakemodel: request body: %w", err)
	}
	var out []Message
	for _, m := range body.Messages {
		msg := Message{Role: m.Role, ToolCallID: m.ToolCallID}
		text, err := contentText(m.Content)
		if err != nil {
			return nil, fmt.Errorf("fakemodel: %s message: %w", m.Role, err)
		}
		msg.Text = text
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, c.Function.Name)
		}
		out = append(out, msg)
	}
	return out, nil
}

func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// Server is a running fake model server.
type Server struct {
	// URL is the API's base URL (http://127.0.0.1:PORT/v1), as models.json's
	// baseUrl.
	URL string

	script func(Request) Reply
	srv    *http.Server
	done   chan struct{}

	mu       sync.Mutex
	requests []Request
}

// Start serves on 127.0.0.1 at a free port, answering each chat
// completions request with script(request). script is called from the
// server's goroutines, one call per request, in the order the requests
// arrive.
func Start(script func(Request) Reply) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1", script: script, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.completions)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.record(Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		http.Error(w, "fakemodel: only POST /v1/chat/completions is served", http.StatusNotFound)
	})
	s.srv = &http.Server{Handler: mux}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Close stops the server and waits for it.
func (s *Server) Close() {
	_ = s.srv.Close()
	<-s.done
}

// Requests returns every request received so far, in order of arrival
// (a request to another path than chat completions included).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
}

// Queue is a script that answers with replies in turn, and with an HTTP
// error once they are used up.
func Queue(replies ...Reply) func(Request) Reply {
	var mu sync.Mutex
	return func(Request) Reply {
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			return Reply{Status: http.StatusTooManyRequests, Text: "fakemodel: no reply left in the queue"}
		}
		r := replies[0]
		replies = replies[1:]
		return r
	}
}

// Echo is a script that answers every request with "echo: " and the text
// of its last user message, and usage derived from the sizes.
func Echo(r Request) Reply {
	msgs, _ := r.Messages()
	last := ""
	for _, m := range msgs {
		if m.Role == "user" {
			last = m.Text
		}
	}
	return Reply{Text: "echo: " + last}
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	// The script runs under the lock: replies go out in the order the
	// requests came in.
	reply := s.script(req)
	s.mu.Unlock()

	if reply.Status != 0 && reply.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": reply.Text, "type": "fakemodel"}})
		return
	}
	var params struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &params)
	u := reply.Usage
	if u == (Usage{}) {
		u = Usage{Prompt: len(body)/4 + 1, Cached: len(body) / 16, Completion: len(reply.Text)/4 + 1}
	}
	finish := reply.FinishReason
	if finish == "" {
		finish = "stop"
		if len(reply.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	n := 0
	send := func(delta map[string]any, finish any, usage any) {
		chunk := map[string]any{
			"id":      "chatcmpl-fake",
			"object":  "chat.completion.chunk",
			"created": 1700000000,
			"model":   params.Model,
			"choices": []any{},
		}
		if delta != nil || finish != nil {
			chunk["choices"] = []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
		}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		n++
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	for _, piece := range pieces(reply.Text, 16) {
		send(map[string]any{"content": piece}, nil, nil)
	}
	for i, c := range reply.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		args := c.Arguments
		if args == "" {
			args = "{}"
		}
		send(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": id, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": args},
		}}}, nil, nil)
	}
	send(map[string]any{}, finish, nil)
	send(nil, nil, map[string]any{
		"prompt_tokens":         u.Prompt,
		"completion_tokens":     u.Completion,
		"total_tokens":          u.Prompt + u.Completion,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached},
	})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// pieces cuts s into runs of at most n bytes, never inside a UTF-8 sequence.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i := min(n, len(s))
		for i < len(s) && i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
		if i == 0 {
			i = len(s)
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// ModelsJSON is the models.json that points pi at the server: provider
// Provider with the one model Model, API openai-completions, a dummy key,
// prices c.
func (s *Server) ModelsJSON(c Costs) []byte {
	b, _ := json.MarshalIndent(map[string]any{
		"providers": map[string]any{
			Provider: map[string]any{
				"baseUrl": s.URL,
				"api":     "openai-completions",
				"apiKey":  "fake-key",
				"models": []any{map[string]any{
					"id":            Model,
					"contextWindow": 128000,
					"maxTokens":     4096,
					"cost": map[string]any{
						"input": c.Input, "output": c.Output, "cacheRead": c.CacheRead, "cacheWrite": c.CacheWrite,
					},
				}},
			},
		},
	}, "", "  ")
	return b
}
