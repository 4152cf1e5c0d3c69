package apply

import "strings"

// shellScanner walks a shell script and tells, for each byte, whether it
// is inside quotes, backquotes or a $( … ) substitution, where `;` and
// blanks do not separate. It knows only what the operators' start scripts
// use: no here-documents, no escapes inside single quotes.
type shellScanner struct {
	single, double, back bool
	depth                int // nesting of $( … )
}

// step records s[i] and reports whether it is quoted (not a separator).
func (sc *shellScanner) step(s string, i int) bool {
	c := s[i]
	switch {
	case sc.single:
		sc.single = c != '\''
		return true
	case c == '\'' && !sc.double && !sc.back:
		sc.single = true
	case c == '"' && !sc.back:
		sc.double = !sc.double
	case c == '`':
		sc.back = !sc.back
	case c == '$' && i+1 < len(s) && s[i+1] == '(':
		sc.depth++
	case c == ')' && sc.depth > 0:
		sc.depth--
		return true
	}
	return sc.double || sc.back || sc.depth > 0 || c == '\'' || c == '"' || c == '`' || c == '$'
}

// splitStatements splits s at newlines and at `;` (and `;;`) outside
// quotes and substitutions.
func splitStatements(s string) []string {
	var out []string
	var sc shellScanner
	start := 0
	for i := 0; i < len(s); i++ {
		quoted := sc.step(s, i)
		if !quoted && (s[i] == '\n' || s[i] == ';') {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// shellWords splits a statement into words at blanks outside quotes and
// substitutions and removes the quote characters ('…' and "…"); backquoted
// and $( … ) text is kept as written.
func shellWords(st string) []string {
	var out []string
	var w strings.Builder
	var sc shellScanner
	inWord := false
	for i := 0; i < len(st); i++ {
		c := st[i]
		wasSingle, wasDouble, wasSub := sc.single, sc.double, sc.back || sc.depth > 0
		quoted := sc.step(st, i)
		switch {
		case !quoted && (c == ' ' || c == '\t'):
			if inWord {
				out = append(out, w.String())
				w.Reset()
				inWord = false
			}
			continue
		case c == '\'' && !wasDouble && !wasSub, c == '"' && !wasSingle && !wasSub:
			inWord = true // a quote opens or closes: drop it, keep the word ("" is a word)
			continue
		}
		w.WriteByte(c)
		inWord = true
	}
	if inWord {
		out = append(out, w.String())
	}
	return out
}
