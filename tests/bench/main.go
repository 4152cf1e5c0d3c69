//go:build bench

// Command bench measures the operator at scale on a dedicated local control
// plane (docs/performance.md): convergence of N TidbClusters against the raw
// API limit, API requests per cluster from the apiserver's audit log,
// steady-state writes and PD/TiDB polling, reaction latency and the
// controller-manager's CPU and memory. Run it through `make bench`
// (hack/bench.sh), which builds the binaries it starts. `kubetidb-bench
// report a.json b.json` prints one table from earlier results.
//
// Environment: BENCH_N (comma-separated, default 100), BENCH_SHAPE (basic,
// ha, tiflash, ticdc or big; comma-separated, each N runs every shape back
// to back and the table compares the others with basic per pod),
// BENCH_BIG_{PD,TIKV,TIDB,TIFLASH,TICDC} (the big shape's replicas), BENCH_IDLE (5m),
// BENCH_SETTLE (40s), BENCH_K (10), BENCH_RAW (1),
// BENCH_OPERATOR_FLAGS, BENCH_OPERATOR_ENV (K=V ..., e.g. GOGC=50), BENCH_CONVERGE_TIMEOUT (10m, plus 1s per cluster),
// BENCH_BIN_DIR (_output/bench/bin), BENCH_OUT (_output/bench).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Config is the bench's settings, from the environment.
type Config struct {
	Ns []int `json:"n"`
	// Shape is BENCH_SHAPE as given: one shape or several, comma-separated.
	Shape           string        `json:"shape"`
	Idle            time.Duration `json:"idle"`
	Settle          time.Duration `json:"settle"`
	K               int           `json:"k"`
	Raw             bool          `json:"raw"`
	OperatorFlags   []string      `json:"operatorFlags"`
	OperatorEnv     []string      `json:"operatorEnv"`
	ConvergeTimeout time.Duration `json:"convergeTimeout"`
	Repo            string        `json:"-"`
	BinDir          string        `json:"-"`
	OutDir          string        `json:"-"`
}

// shapes returns the shapes of BENCH_SHAPE, in order.
func (c Config) shapes() []string {
	var out []string
	for _, s := range strings.Split(c.Shape, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (c Config) operatorBin() string  { return filepath.Join(c.BinDir, "tidb-controller-manager") }
func (c Config) simulatorBin() string { return filepath.Join(c.BinDir, "tidb-simulator") }

func main() {
	os.Exit(run())
}

func run() int {
	if len(os.Args) > 2 && os.Args[1] == "report" {
		return report(os.Args[2:])
	}
	cfg, err := loadConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	stamp := time.Now().UTC().Format("20060102-150405")
	runDir := filepath.Join(cfg.OutDir, stamp)
	rep := &Report{StartedAt: time.Now().UTC(), Machine: readMachine(), Config: cfg}
	failed := false
	// The shapes of one N run back to back, so that a comparison between
	// them is taken on the machine in the same state.
rounds:
	for _, n := range cfg.Ns {
		for _, shape := range cfg.shapes() {
			start := time.Now()
			res := runRound(ctx, cfg, shape, n, filepath.Join(runDir, roundDir(shape, n)))
			logf("N=%d %s done in %v%s", n, shape, time.Since(start).Round(time.Second), errSuffix(res.Error))
			failed = failed || res.Error != ""
			rep.Rounds = append(rep.Rounds, res)
			if err := writeReport(rep, cfg.OutDir, stamp); err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				return 1
			}
			if ctx.Err() != nil {
				break rounds
			}
		}
	}
	table := renderTable(rep)
	fmt.Print(table)
	_ = os.WriteFile(filepath.Join(cfg.OutDir, stamp+".txt"), []byte(table), 0o644)
	logf("results: %s (logs in %s)", filepath.Join(cfg.OutDir, stamp+".json"), runDir)
	if failed || ctx.Err() != nil {
		return 1
	}
	return 0
}

// roundDir is where a round keeps its logs: N<n> for the basic shape (as
// before shapes could be combined), N<n>-<shape> for the others.
func roundDir(shape string, n int) string {
	if shape == "basic" {
		return fmt.Sprintf("N%d", n)
	}
	return fmt.Sprintf("N%d-%s", n, shape)
}

// report prints one table from the rounds of several result files, e.g. a
// `make bench` (N=100) and a BENCH_N=1,10,50 run, in the order given.
func report(files []string) int {
	var merged *Report
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench report:", err)
			return 1
		}
		rep := &Report{}
		if err := json.Unmarshal(raw, rep); err != nil {
			fmt.Fprintf(os.Stderr, "bench report: %s: %v\n", f, err)
			return 1
		}
		if merged == nil {
			merged = rep
			continue
		}
		merged.Rounds = append(merged.Rounds, rep.Rounds...)
	}
	fmt.Print(renderTable(merged))
	return 0
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " with errors: " + e
}

func writeReport(rep *Report, dir, stamp string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, stamp+".json"), append(b, '\n'), 0o644)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func loadConfig() (Config, error) {
	repo, err := os.Getwd()
	if err != nil {
		return Config{}, err
	}
	cfg := Config{Repo: repo, Shape: env("BENCH_SHAPE", "basic"), Raw: env("BENCH_RAW", "1") != "0"}
	cfg.BinDir, _ = filepath.Abs(env("BENCH_BIN_DIR", filepath.Join(repo, "_output", "bench", "bin")))
	cfg.OutDir, _ = filepath.Abs(env("BENCH_OUT", filepath.Join(repo, "_output", "bench")))
	for _, s := range strings.Split(env("BENCH_N", "100"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return cfg, fmt.Errorf("BENCH_N: %q is not a positive number", s)
		}
		cfg.Ns = append(cfg.Ns, n)
	}
	durations := []struct {
		dst  *time.Duration
		name string
		def  string
	}{
		{&cfg.Idle, "BENCH_IDLE", "5m"},
		{&cfg.Settle, "BENCH_SETTLE", "40s"},
		{&cfg.ConvergeTimeout, "BENCH_CONVERGE_TIMEOUT", "10m"},
	}
	for _, d := range durations {
		if *d.dst, err = time.ParseDuration(env(d.name, d.def)); err != nil {
			return cfg, fmt.Errorf("%s: %w", d.name, err)
		}
	}
	if cfg.K, err = strconv.Atoi(env("BENCH_K", "10")); err != nil || cfg.K < 0 {
		return cfg, fmt.Errorf("BENCH_K: %q is not a number", os.Getenv("BENCH_K"))
	}
	cfg.OperatorFlags = strings.Fields(os.Getenv("BENCH_OPERATOR_FLAGS"))
	cfg.OperatorEnv = strings.Fields(os.Getenv("BENCH_OPERATOR_ENV"))
	if len(cfg.shapes()) == 0 {
		return cfg, fmt.Errorf("BENCH_SHAPE: no shape in %q", cfg.Shape)
	}
	for _, shape := range cfg.shapes() {
		if _, _, err := loadShape(shape); err != nil {
			return cfg, err
		}
	}
	for _, bin := range []string{cfg.operatorBin(), cfg.simulatorBin()} {
		if _, err := os.Stat(bin); err != nil {
			return cfg, fmt.Errorf("%s is missing: build with 'make build BIN_DIR=%s' (hack/bench.sh does)", bin, cfg.BinDir)
		}
	}
	return cfg, os.MkdirAll(cfg.OutDir, 0o755)
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
