//go:build integration

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// hold, when $STANDIN_BR_HOLD names a directory, marks the backup as under
// way (the file "started" there) and blocks until the test opens the fifo
// "go" there for writing and closes it: a deterministic point mid-backup
// for a fault.
func hold() error {
	dir := os.Getenv("STANDIN_BR_HOLD")
	if dir == "" {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, "started"), []byte("1"), 0o644); err != nil {
		return fmt.Errorf("marking the backup started: %w", err)
	}
	fifo, err := os.Open(filepath.Join(dir, "go"))
	if err != nil {
		return fmt.Errorf("opening the hold fifo: %w", err)
	}
	defer func() { _ = fifo.Close() }()
	_, err = io.Copy(io.Discard, fifo)
	return err
}
