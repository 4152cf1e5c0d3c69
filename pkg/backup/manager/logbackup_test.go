package manager

import "testing"

func TestCheckpointOf(t *testing.T) {
	t.Parallel()
	lines := []string{"Detail BR log in /tmp/br.log", `[{"name":"other","status":"NORMAL","checkpoint":7},{"name":"lb","status":"NORMAL","checkpoint":450000000000000002}]`}
	if got, err := checkpointOf(lines, "lb"); err != nil || got != 450000000000000002 {
		t.Errorf("checkpointOf = %d, %v", got, err)
	}
	if _, err := checkpointOf(lines, "gone"); err == nil {
		t.Error("a missing task gave a checkpoint")
	}
	if _, err := checkpointOf(lines[:1], "lb"); err == nil {
		t.Error("output without JSON gave a checkpoint")
	}
	if _, err := checkpointOf([]string{"[not json"}, "lb"); err == nil {
		t.Error("garbage gave a checkpoint")
	}
}
