// Command tidb-controller-manager runs the kubetidb controllers. See
// `tidb-controller-manager --help` and docs/user-guide.md.
package main

import (
	"os"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:]))
}
