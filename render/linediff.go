package render

// Line diffs for changes/: the hunks between two contents the session
// shows whole (a write over a file the session wrote before, an edit
// replayed on it), in unified diff form.

// splitLines cuts text into lines that keep their line feed; the last
// line has none when the text does not end in one.
func splitLines(text []byte) [][]byte {
	var out [][]byte
	for len(text) > 0 {
		i := 0
		for i < len(text) && text[i] != '\n' {
			i++
		}
		if i < len(text) {
			i++
		}
		out = append(out, text[:i:i])
		text = text[i:]
	}
	return out
}

// hunkLine is one line of a hunk: its kind (' ', '-' or '+') and its text
// with its line feed, if it has one.
type hunkLine struct {
	kind byte
	text []byte
}

// hunk is one hunk of a unified diff: 1-based starts, as the @@ line gives
// them (a start is the line before, 0 at the top, when its side has no
// line).
type hunk struct {
	oldStart, oldLines, newStart, newLines int
	lines                                  []hunkLine
}

// diffContext is how many unchanged lines a hunk shows around a change.
const diffContext = 3

// maxDiffD bounds the differences the diff looks for between two lines
// runs: beyond it, the run is shown as all its old lines then all its new
// ones, which is a correct hunk too, so that a large rewrite costs memory
// in proportion to its size, not its square.
const maxDiffD = 512

// lineHunks is the unified diff of a and b as hunks with diffContext lines
// of context.
func lineHunks(a, b [][]byte) []hunk {
	ops := diffOps(a, b)
	var out []hunk
	// ops[i] is '=', '-' or '+'; ai and bi walk a and b.
	ai, bi := 0, 0
	type pos struct{ op, a, b int }
	var all []pos
	for _, op := range ops {
		all = append(all, pos{int(op), ai, bi})
		switch op {
		case '=':
			ai++
			bi++
		case '-':
			ai++
		case '+':
			bi++
		}
	}
	i := 0
	for i < len(all) {
		for i < len(all) && all[i].op == '=' {
			i++
		}
		if i == len(all) {
			break
		}
		start := max(i-diffContext, 0) // equal lines: the previous hunk ended before them
		// Extend over changes separated by at most 2*diffContext equal lines.
		end := i
		for {
			for end < len(all) && all[end].op != '=' {
				end++
			}
			k := end
			for k < len(all) && all[k].op == '=' {
				k++
			}
			if k < len(all) && k-end <= 2*diffContext {
				end = k
				continue
			}
			end = min(end+diffContext, k)
			break
		}
		h := hunk{oldStart: all[start].a + 1, newStart: all[start].b + 1}
		for _, p := range all[start:end] {
			switch p.op {
			case '=':
				h.lines = append(h.lines, hunkLine{' ', a[p.a]})
				h.oldLines++
				h.newLines++
			case '-':
				h.lines = append(h.lines, hunkLine{'-', a[p.a]})
				h.oldLines++
			case '+':
				h.lines = append(h.lines, hunkLine{'+', b[p.b]})
				h.newLines++
			}
		}
		if h.oldLines == 0 {
			h.oldStart--
		}
		if h.newLines == 0 {
			h.newStart--
		}
		out = append(out, h)
		i = end
	}
	return out
}

// diffOps is an edit script from a to b: '=' keeps a line, '-' drops one
// of a, '+' adds one of b; deletions come before insertions in a run.
func diffOps(a, b [][]byte) []byte {
	pre := 0
	for pre < len(a) && pre < len(b) && string(a[pre]) == string(b[pre]) {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && string(a[len(a)-1-suf]) == string(b[len(b)-1-suf]) {
		suf++
	}
	ops := make([]byte, 0, len(a)+len(b)-pre-suf)
	for range pre {
		ops = append(ops, '=')
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for range suf {
		ops = append(ops, '=')
	}
	return ops
}

// myers is Myers's greedy shortest edit script of a and b, or all of a's
// lines deleted then all of b's inserted when they differ in more than
// maxDiffD lines.
func myers(a, b [][]byte) []byte {
	n, m := len(a), len(b)
	whole := func() []byte {
		ops := make([]byte, 0, n+m)
		for range n {
			ops = append(ops, '-')
		}
		for range m {
			ops = append(ops, '+')
		}
		return ops
	}
	if n == 0 || m == 0 {
		return whole()
	}
	maxD := min(n+m, maxDiffD)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && string(a[x]) == string(b[y]) {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return whole()
	}
	// Walk back from (n, m) through the saved rows: trace[d] holds v as
	// it was before round d, for k in [-d-1, d+1].
	var rev []byte
	x, y := n, m
	for d := found; d > 0; d-- {
		row := trace[d]
		at := func(k int) int { return row[k+d+1] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			rev = append(rev, '=')
			x--
			y--
		}
		if x == px {
			rev = append(rev, '+')
			y--
		} else {
			rev = append(rev, '-')
			x--
		}
	}
	for x > 0 && y > 0 {
		rev = append(rev, '=')
		x--
		y--
	}
	ops := make([]byte, len(rev))
	for i, op := range rev {
		ops[len(rev)-1-i] = op
	}
	return deletionsFirst(ops)
}

// deletionsFirst puts the deletions of each run of changes before its
// insertions: the same edit, as diff(1) shows it.
func deletionsFirst(ops []byte) []byte {
	for i := 0; i < len(ops); {
		if ops[i] == '=' {
			i++
			continue
		}
		j, dels := i, 0
		for j < len(ops) && ops[j] != '=' {
			if ops[j] == '-' {
				dels++
			}
			j++
		}
		for k := i; k < j; k++ {
			ops[k] = '+'
			if k < i+dels {
				ops[k] = '-'
			}
		}
		i = j
	}
	return ops
}
