package label

// The TidbInitializer Job's labels, as the TiDB Operator sets them.
const (
	// TiDBInitializerLabelVal is the component value of the initializer Job and its pod.
	TiDBInitializerLabelVal = "tidb-initializer"
	// InitializerLabelKey names the TidbInitializer a Job belongs to.
	InitializerLabelKey = "tidb.pingcap.com/initializer"
)

// NewInitializer returns the labels of the Job of TidbInitializer
// initializer for TidbCluster instance: component tidb-initializer,
// managed-by tidb-operator, the cluster as instance and the initializer's
// name. There is no name=tidb-cluster, so no selector of the cluster's
// members ever matches the Job's pod.
func NewInitializer(instance, initializer string) Label {
	return Label{
		ComponentLabelKey:   TiDBInitializerLabelVal,
		ManagedByLabelKey:   TiDBOperator,
		InstanceLabelKey:    instance,
		InitializerLabelKey: initializer,
	}
}
