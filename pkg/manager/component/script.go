package component

import "fmt"

// ScriptPreamble returns the opening every start script shares: the shell,
// a header naming the server, and the debug switch — a pod annotated
// runmode=debug idles instead of starting the server, for inspection.
func ScriptPreamble(server, component string) string {
	return fmt.Sprintf(`#!/bin/sh
# Start script of %[1]s, rendered by kubetidb. Changing it rolls the %[2]s pods.
set -u
ANNOTATIONS=/etc/podinfo/annotations
if [ ! -e "$ANNOTATIONS" ]; then
  echo "$ANNOTATIONS does not exist" >&2
  exit 1
fi
# A pod annotated runmode=debug idles instead of starting, for inspection.
if grep -q '^runmode="debug"$' "$ANNOTATIONS"; then
  echo "runmode=debug: not starting %[1]s"
  exec tail -f /dev/null
fi
`, server, component)
}
