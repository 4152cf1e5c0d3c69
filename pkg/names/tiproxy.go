package names

// TiProxy is the TiProxy component's name in object names and labels:
// StatefulSet and client Service <tc>-tiproxy, headless Service
// <tc>-tiproxy-peer, ConfigMap <tc>-tiproxy.
const TiProxy = "tiproxy"
