//go:build integration

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// tsoStep is how far a running task's checkpoint advances per `log status`:
// one second of TSO physical time (milliseconds shifted by 18 logical bits).
const tsoStep = 1000 << 18

// task is the stand-in's record of a log backup task, which real BR keeps
// in PD's etcd: its checkpoint TSO and whether it is paused.
type task struct {
	Checkpoint uint64 `json:"checkpoint"`
	Paused     bool   `json:"paused"`
}

// taskFile is where task name is recorded: $STANDIN_BR_STATE_DIR, else
// br-tasks next to $STANDIN_BR_ARGS_FILE, else the temp directory.
func taskFile(name string) string {
	dir := os.Getenv("STANDIN_BR_STATE_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "standin-br-tasks")
		if f := os.Getenv("STANDIN_BR_ARGS_FILE"); f != "" {
			dir = filepath.Join(filepath.Dir(f), "br-tasks")
		}
	}
	return filepath.Join(dir, name+".json")
}

func loadTask(name string) (task, error) {
	var t task
	data, err := os.ReadFile(taskFile(name))
	if errors.Is(err, os.ErrNotExist) {
		return t, fmt.Errorf("log backup task %q not found", name)
	}
	if err != nil {
		return t, err
	}
	return t, json.Unmarshal(data, &t)
}

func saveTask(name string, t task) error {
	p := taskFile(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// startTask records task name with its start TSO as the first checkpoint.
func startTask(name, startTS string) error {
	ts, _ := strconv.ParseUint(startTS, 10, 64)
	if ts == 0 {
		ts = 449000000000000000
	}
	return saveTask(name, task{Checkpoint: ts})
}

// controlTask stands in for `br log pause|resume|status|stop --task-name=…`
// (BR reaches the task through PD, not the storage): pause and resume need
// the task, status advances a running task's checkpoint and prints BR's
// JSON task list, stop forgets the task.
func controlTask(sub, name string) error {
	t, err := loadTask(name)
	if err != nil && sub != "stop" {
		return err
	}
	switch sub {
	case "pause":
		t.Paused = true
	case "resume":
		t.Paused = false
	case "status":
		if !t.Paused {
			t.Checkpoint += tsoStep
		}
		state := "NORMAL"
		if t.Paused {
			state = "PAUSE"
		}
		out, _ := json.Marshal([]map[string]any{{"name": name, "status": state, "checkpoint": t.Checkpoint}})
		fmt.Println(string(out))
	case "stop":
		_ = os.Remove(taskFile(name))
		fmt.Printf("[%s] [INFO] [stream.go:1] [\"log stop success\"] [task=%s]\n", stamp(), name)
		return nil
	default:
		return fmt.Errorf("unknown log command %q", sub)
	}
	if err := saveTask(name, t); err != nil {
		return err
	}
	if sub != "status" {
		fmt.Printf("[%s] [INFO] [stream.go:1] [\"log %s success\"] [task=%s]\n", stamp(), sub, name)
	}
	return nil
}
