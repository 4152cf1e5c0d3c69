package component

import (
	"regexp"
	"slices"
	"strings"
)

// sameScriptMeaning reports whether two start scripts start the same server
// the same way: the program the script finally execs, every flag it can
// pass to it, with the script's own plain variables expanded, and what it
// waits for first (dnsWaitOf). Comments, spacing, variable names, the way
// the DNS wait is written and the debug switch are not compared, so a
// script the TiDB Operator v1 rendered for the same cluster compares equal
// to ours, while a changed flag (data dir, scheme, config path, name) or a
// DNS wait added, dropped or made to match the pod's addresses (the v2
// feature flags) does not.
func sameScriptMeaning(a, b string) bool {
	ma, oka := scriptMeaningOf(a)
	mb, okb := scriptMeaningOf(b)
	return oka && okb && ma.exec == mb.exec && ma.wait == mb.wait && slices.Equal(ma.flags, mb.flags)
}

// scriptMeaning is the program a start script execs, the flags it can pass
// and the DNS wait before it.
type scriptMeaning struct {
	exec  string
	flags []string // sorted, unique
	wait  string
}

var (
	addressRE = regexp.MustCompile(`\bhostname\s+-[iI]\b`)
	lookupRE  = regexp.MustCompile(`\b(nslookup|dig|getent)\s`)
)

// dnsWaitOf names the DNS wait of a script's lines: "address" when it
// compares the pod's own addresses (hostname -i/-I) with a lookup, "resolve"
// when it only looks a name up (nslookup, dig, getent), "" without either.
func dnsWaitOf(lines []string) string {
	wait := ""
	for _, l := range lines {
		switch {
		case addressRE.MatchString(l):
			return "address"
		case lookupRE.MatchString(l):
			wait = "resolve"
		}
	}
	return wait
}

var (
	assignRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)
	varRE    = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)
	flagRE   = regexp.MustCompile(`(?:^|[\s"'=])(--[A-Za-z][A-Za-z0-9._-]*(?:=[^\s"']*)?)`)
)

// scriptMeaningOf reads s; ok is false when s execs no program.
func scriptMeaningOf(s string) (scriptMeaning, bool) {
	lines := scriptLines(s)
	vars := plainVariables(lines)
	m := scriptMeaning{wait: dnsWaitOf(lines)}
	seen := map[string]bool{}
	for _, line := range lines {
		if rest, ok := strings.CutPrefix(line, "exec "); ok {
			m.exec = strings.Fields(rest)[0]
		} else if !isPlainAssignment(line) {
			continue
		}
		for _, f := range flagRE.FindAllStringSubmatch(expandVars(line, vars, 0), -1) {
			if !seen[f[1]] {
				seen[f[1]] = true
				m.flags = append(m.flags, f[1])
			}
		}
	}
	slices.Sort(m.flags)
	return m, m.exec != "" && !strings.HasPrefix(m.exec, "tail")
}

// scriptLines joins continued lines and drops blank and comment lines.
func scriptLines(s string) []string {
	s = strings.ReplaceAll(s, "\\\n", " ")
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// isPlainAssignment reports an assignment without a command substitution.
func isPlainAssignment(line string) bool {
	m := assignRE.FindStringSubmatch(line)
	return m != nil && !strings.Contains(m[2], "$(") && !strings.Contains(m[2], "`")
}

// computed stands for the value of a variable the script computes at run
// time (assigned more than once, or from a command's output).
const computed = "$(computed)"

// plainVariables maps each variable the script assigns to its value when
// it is assigned once, from no command and not from itself; a variable
// assigned otherwise maps to computed. Variables the script never assigns
// (the pod's environment) are absent.
func plainVariables(lines []string) map[string]string {
	count := map[string]int{}
	vars := map[string]string{}
	for _, line := range lines {
		m := assignRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, value := m[1], unquote(m[2])
		count[name]++
		switch {
		case count[name] > 1 || !isPlainAssignment(line):
			vars[name] = computed
		case refersTo(value, name):
			// POD_NAME=${POD_NAME:-$HOSTNAME}: still the environment's.
		default:
			vars[name] = value
		}
	}
	return vars
}

func refersTo(value, name string) bool {
	for _, m := range varRE.FindAllStringSubmatch(value, -1) {
		if m[1] == name || m[3] == name {
			return true
		}
	}
	return false
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// expandVars replaces the script's plain variables by their values (up to
// a small depth) and writes every other reference as ${NAME}.
func expandVars(s string, vars map[string]string, depth int) string {
	return varRE.ReplaceAllStringFunc(s, func(ref string) string {
		m := varRE.FindStringSubmatch(ref)
		name := m[1] + m[3]
		v, ok := vars[name]
		switch {
		case !ok:
			return "${" + name + "}"
		case v == computed || depth > 4:
			return computed
		}
		return expandVars(v, vars, depth+1)
	})
}
