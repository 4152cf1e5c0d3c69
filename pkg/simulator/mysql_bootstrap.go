package simulator

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	toml "github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Where TiDB's config lives in its ConfigMap and pod, as the operator lays it out.
const (
	tidbConfigKey        = "config-file"
	tidbContainer        = "tidb"
	initializeSQLFileKey = "initialize-sql-file"
	// bootstrapResync re-reads TiDB pods, so a bootstrap whose ConfigMap was
	// missing or whose backend failed is tried again.
	bootstrapResync = 5 * time.Second
	bootstrapExec   = 30 * time.Second
)

// bootstrapRunner plays TiDB's first bootstrap: when a cluster's first TiDB
// pod runs with a config whose initialize-sql-file names a file mounted
// from a ConfigMap, that SQL runs once against the backend as root (empty
// password, as on a new TiDB), and never again for that cluster — not when
// the pod restarts, nor for its other pods.
type bootstrapRunner struct {
	kube      kubernetes.Interface
	namespace string
	backend   string
	log       klog.Logger

	mu      sync.Mutex
	done    map[string]bool          // ns/cluster → the SQL ran
	running map[string]chan struct{} // ns/cluster → closed when the run ends
}

func newBootstrapRunner(kube kubernetes.Interface, namespace, backend string, log klog.Logger) *bootstrapRunner {
	return &bootstrapRunner{kube: kube, namespace: namespace, backend: backend, log: log,
		done: map[string]bool{}, running: map[string]chan struct{}{}}
}

// start watches TiDB pods until ctx ends; it errors when the cache does not sync.
func (b *bootstrapRunner) start(ctx context.Context) error {
	f := kubeinformers.NewSharedInformerFactoryWithOptions(b.kube, bootstrapResync,
		kubeinformers.WithNamespace(b.namespace),
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = LabelComponent + "=tidb" }))
	inf := f.Core().V1().Pods().Informer()
	handle := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			b.consider(ctx, pod)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: handle, UpdateFunc: func(_, obj any) { handle(obj) },
	}); err != nil {
		return fmt.Errorf("bootstrap pod handler: %w", err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return errors.New("bootstrap: TiDB pod cache did not sync")
	}
	return nil
}

// Ran reports whether namespace/cluster's bootstrap SQL has run.
func (b *bootstrapRunner) Ran(namespace, cluster string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done[namespace+"/"+cluster]
}

// wait returns once namespace/cluster's running bootstrap (if any) ended,
// or errors when ctx ends first.
func (b *bootstrapRunner) wait(ctx context.Context, namespace, cluster string) error {
	b.mu.Lock()
	ch := b.running[namespace+"/"+cluster]
	b.mu.Unlock()
	if ch == nil {
		return nil
	}
	select { // an ended run wins over an ended ctx
	case <-ch:
		return nil
	default:
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("TiDB of %s/%s is still bootstrapping: %w", namespace, cluster, ctx.Err())
	}
}

// consider runs pod's cluster's bootstrap SQL when the pod runs, the
// cluster's SQL has neither run nor is running, and its config names one.
func (b *bootstrapRunner) consider(ctx context.Context, pod *corev1.Pod) {
	cluster := pod.Labels[LabelInstance]
	if cluster == "" || pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return
	}
	key := pod.Namespace + "/" + cluster
	b.mu.Lock()
	if b.done[key] || b.running[key] != nil {
		b.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	b.running[key] = ch
	b.mu.Unlock()
	ran, err := b.run(ctx, pod)
	b.mu.Lock()
	if ran {
		b.done[key] = true
	}
	delete(b.running, key)
	close(ch)
	b.mu.Unlock()
	if err != nil {
		b.log.Error(err, "bootstrap SQL not run; retrying on the next resync", "cluster", key, "pod", pod.Name)
	} else if ran {
		b.log.Info("bootstrap SQL ran", "cluster", key, "pod", pod.Name)
	}
}

// run executes the SQL pod's config names; ran is false when it names none.
func (b *bootstrapRunner) run(ctx context.Context, pod *corev1.Pod) (ran bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, bootstrapExec)
	defer cancel()
	file, err := b.initializeSQLFile(ctx, pod)
	if err != nil || file == "" {
		return false, err
	}
	stmts, err := b.mountedFile(ctx, pod, file)
	if err != nil {
		return false, err
	}
	if err := b.exec(ctx, stmts); err != nil {
		return false, err
	}
	return true, nil
}

// initializeSQLFile reads initialize-sql-file from the TiDB config in the
// pod's ConfigMap volumes ("" when not set).
func (b *bootstrapRunner) initializeSQLFile(ctx context.Context, pod *corev1.Pod) (string, error) {
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		cm, err := b.kube.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("ConfigMap %s of pod %s: %w", v.ConfigMap.Name, pod.Name, err)
		}
		text, ok := cm.Data[tidbConfigKey]
		if !ok {
			continue
		}
		var cfg map[string]any
		if err := toml.Unmarshal([]byte(text), &cfg); err != nil {
			return "", fmt.Errorf("TiDB config in ConfigMap %s: %w", cm.Name, err)
		}
		file, _ := cfg[initializeSQLFileKey].(string)
		return file, nil
	}
	return "", nil
}

// mountedFile reads file from the ConfigMap volume the tidb container
// mounts it from.
func (b *bootstrapRunner) mountedFile(ctx context.Context, pod *corev1.Pod, file string) (string, error) {
	for _, c := range pod.Spec.Containers {
		if c.Name != tidbContainer {
			continue
		}
		for _, m := range c.VolumeMounts {
			rel, ok := strings.CutPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/")
			if !ok {
				continue
			}
			return b.volumeFile(ctx, pod, m.Name, path.Clean(rel))
		}
	}
	return "", fmt.Errorf("initialize-sql-file %s is in no volume of pod %s's tidb container", file, pod.Name)
}

// volumeFile returns the content of rel in pod's ConfigMap volume name.
func (b *bootstrapRunner) volumeFile(ctx context.Context, pod *corev1.Pod, name, rel string) (string, error) {
	for _, v := range pod.Spec.Volumes {
		if v.Name != name || v.ConfigMap == nil {
			continue
		}
		key := rel
		if len(v.ConfigMap.Items) > 0 {
			key = ""
			for _, it := range v.ConfigMap.Items {
				if path.Clean(it.Path) == rel {
					key = it.Key
				}
			}
		}
		cm, err := b.kube.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("bootstrap SQL ConfigMap %s: %w", v.ConfigMap.Name, err)
		}
		text, ok := cm.Data[key]
		if !ok || key == "" {
			return "", fmt.Errorf("ConfigMap %s has no file %s", cm.Name, rel)
		}
		return text, nil
	}
	return "", fmt.Errorf("volume %s of pod %s is not a ConfigMap", name, pod.Name)
}

// exec runs stmts (several statements allowed) on the backend as root.
func (b *bootstrapRunner) exec(ctx context.Context, stmts string) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", b.backend
	cfg.MultiStatements = true
	cfg.Timeout = 10 * time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("backend %s: %w", b.backend, err)
	}
	db := sql.OpenDB(conn)
	defer func() { _ = db.Close() }()
	if _, err := db.ExecContext(ctx, stmts); err != nil {
		return fmt.Errorf("bootstrap SQL on %s: %w", b.backend, err)
	}
	return nil
}
