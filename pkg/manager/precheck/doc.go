// Package precheck checks the objects a sync is about to write with the rules
// the Kubernetes API server applies on create, so that a bad value passed
// through from a TidbCluster spec (an illegal label key, a toleration with
// operator Exists and a value, a nameless additional container …) stops the
// sync before its first write instead of leaving a half-applied change that
// is retried for ever.
//
// The rules are re-implemented on top of the k8s.io/apimachinery validation
// helpers; they cover what a user's spec can break, not every rule of the API
// server. Where the API server defaults a field before validating it (an
// empty Service type, port protocol, imagePullPolicy, a volume without a
// source …) the empty value is accepted, and where the server's rule changed
// between releases the more lenient rule is taken, because a precheck that
// rejects what the server would accept blocks a cluster for ever, while one
// that misses a rule only falls back to today's behaviour.
//
// Everything here is pure: functions read nothing but their arguments (no
// clients, listers, clock or environment), never panic on nil pointers or
// empty objects, and return errors in a deterministic order.
package precheck
