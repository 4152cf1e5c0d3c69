//go:build tools

// Package tools pins build-only tools in go.mod so that hack/update-codegen.sh
// runs the code generators at the module's own version.
package tools

import (
	_ "k8s.io/code-generator"
)
