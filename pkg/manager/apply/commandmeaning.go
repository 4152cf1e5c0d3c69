package apply

import (
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// sameCommand reports whether two containers run the same command line:
// the same argv; or two inline shell scripts (sh -c SCRIPT [NAME ARG...])
// whose statements are the same once the script's positional parameters
// are replaced by its arguments (statementsOf); or two inline scripts that
// start the same server the same way (serverLineOf). So the TiDB Operator
// v1's `touch F; tail -n0 -F F;` is the same log tailer as ours
// (`touch "$1"; exec tail -n0 -F "$1"` with F as argument), and its one-line
// TiCDC command the same as our `exec /cdc server \` continued over lines;
// a changed file, flag or program is not.
func sameCommand(live, desired corev1.Container) bool {
	l := append(slices.Clone(live.Command), live.Args...)
	d := append(slices.Clone(desired.Command), desired.Args...)
	if slices.Equal(l, d) {
		return true
	}
	ls, lok := inlineScript(l)
	ds, dok := inlineScript(d)
	if !lok || !dok {
		return false
	}
	if slices.EqualFunc(ls, ds, slices.Equal[[]string]) {
		return true
	}
	lsrv, lok := serverLineOf(ls)
	dsrv, dok := serverLineOf(ds)
	return lok && dok && slices.Equal(lsrv, dsrv)
}

// inlineScript returns the statements of argv when it runs an inline shell
// script (sh -c SCRIPT [NAME ARG...]).
func inlineScript(argv []string) ([][]string, bool) {
	if len(argv) < 3 || argv[1] != "-c" || !slices.Contains([]string{"sh", "/bin/sh", "bash", "/bin/bash"}, argv[0]) {
		return nil, false
	}
	return statementsOf(argv[2], argv[3:]), true
}

// inlineScriptText returns the script text of an inline shell command, ""
// for any other command (a script file's text is not in the template).
func inlineScriptText(c corev1.Container) string {
	argv := append(slices.Clone(c.Command), c.Args...)
	if _, ok := inlineScript(argv); !ok {
		return ""
	}
	return strings.Join(argv[2:], " ")
}

var positionalRE = regexp.MustCompile(`\$\{?([0-9])\}?`)

// statementsOf splits script into its statements, each a list of words
// with the shell's quoting removed, the positional parameters $0… replaced
// by params, `set` statements and a leading `exec` left out (shell options
// and replacing the shell do not change what runs), guards that only
// refuse a bad input left out (failGuardRE), and the known spellings of a
// command substitution normalized (normalizeWord).
func statementsOf(script string, params []string) [][]string {
	script = strings.ReplaceAll(script, "\\\n", " ")
	script = removeFailGuards(script)
	var out [][]string
	for _, st := range splitStatements(script) {
		words := shellWords(st)
		if len(words) == 0 || strings.HasPrefix(words[0], "#") || words[0] == "set" {
			continue
		}
		if words[0] == "exec" && len(words) > 1 {
			words = words[1:]
		}
		for i, w := range words {
			if len(params) > 0 {
				w = positionalRE.ReplaceAllStringFunc(w, func(ref string) string {
					n := int(positionalRE.FindStringSubmatch(ref)[1][0] - '0')
					if n < len(params) {
						return params[n]
					}
					return ""
				})
			}
			words[i] = normalizeWord(w)
		}
		out = append(out, words)
	}
	return out
}

// serverLineOf returns the one statement of a script that runs a program
// by its absolute path (a server such as /pump, /cdc or /tiflash/tiflash):
// the program and its arguments in sorted order, without a trailing `&`.
// Flags are order-free for these servers. ok is false when no statement or
// more than one program runs so.
func serverLineOf(statements [][]string) ([]string, bool) {
	var line []string
	for _, st := range statements {
		if !strings.HasPrefix(st[0], "/") || strings.HasPrefix(st[0], "/bin/") || strings.HasPrefix(st[0], "/usr/") {
			continue
		}
		if line != nil && line[0] != st[0] {
			return nil, false
		}
		args := slices.Clone(st[1:])
		if n := len(args); n > 0 && args[n-1] == "&" {
			args = args[:n-1]
		}
		slices.Sort(args)
		line = append([]string{st[0]}, args...)
	}
	return line, line != nil
}

var (
	echoSubstRE    = regexp.MustCompile("`echo ([^`|;]+)`|\\$\\(echo ([^)|;]+)\\)")
	ordinalRE      = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(?:` + "`" + `|\$\()echo \$\{?([A-Za-z_][A-Za-z0-9_]*)\}? \| awk -F- '\{print \$NF\}'(?:` + "`" + `|\))$`)
	failGuardRE    = regexp.MustCompile(`(?s)(?:^|\n)[ \t]*case[ \t][^\n]*[ \t]in[ \t]*\n(.*?)\n[ \t]*esac\b`)
	failCommandsRE = regexp.MustCompile(`^(echo\b.*|exit [1-9][0-9]*)$`)
)

// normalizeWord writes the same value one way: `echo X` and $(echo X) are
// X, and the ordinal the TiDB Operator v1 takes from the pod's name with
// awk (V=`echo ${POD_NAME} | awk -F- '{print $NF}'`) is the one we take
// with the shell (V=${POD_NAME##*-}): both the name's last '-' field.
func normalizeWord(w string) string {
	if m := ordinalRE.FindStringSubmatch(w); m != nil {
		return m[1] + "=${" + m[2] + "##*-}"
	}
	return echoSubstRE.ReplaceAllString(w, "$1$2")
}

// removeFailGuards drops each case … esac whose every branch only echoes
// and exits non-zero: a check that stops the script on a bad input and,
// for an input it accepts, changes nothing that runs.
func removeFailGuards(script string) string {
	return failGuardRE.ReplaceAllStringFunc(script, func(block string) string {
		body := failGuardRE.FindStringSubmatch(block)[1]
		for _, branch := range strings.Split(body, ";;") {
			if strings.TrimSpace(branch) == "" {
				continue
			}
			_, cmds, ok := strings.Cut(branch, ")")
			if !ok || !onlyFails(cmds) {
				return block
			}
		}
		return "\n"
	})
}

// onlyFails reports commands that only echo and then exit non-zero.
func onlyFails(cmds string) bool {
	exits := false
	for _, c := range splitStatements(cmds) {
		c = strings.TrimSpace(c)
		if !failCommandsRE.MatchString(c) {
			return false
		}
		exits = exits || strings.HasPrefix(c, "exit ")
	}
	return exits
}
