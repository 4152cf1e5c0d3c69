package names

import "strings"

// PeerAddress matches the addresses of a cluster's pods of one component
// through its peer Service:
// <tc>-<component>-<n>.<tc>-<component>-peer.<ns>.svc[.<domain>]:<port>.
// It is plain string work: a sync matches every PD member and store, and a
// regular expression compiled per sync cost more than the rest of it.
type PeerAddress struct {
	member, service string // "<tc>-<component>-", ".<tc>-<component>-peer.<ns>.svc"
}

// NewPeerAddress returns the matcher of tc's (in namespace) pods of component.
func NewPeerAddress(tc, namespace, component string) PeerAddress {
	member := Member(tc, component)
	return PeerAddress{member: member + "-", service: "." + member + "-peer." + namespace + ".svc"}
}

// MatchString reports whether addr (host:port, no scheme) is one of the pods.
func (a PeerAddress) MatchString(addr string) bool {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 || !allDigits(addr[i+1:]) {
		return false
	}
	host, ok := strings.CutPrefix(addr[:i], a.member)
	if !ok {
		return false
	}
	dot := strings.IndexByte(host, '.')
	if dot <= 0 || !allDigits(host[:dot]) {
		return false
	}
	rest, ok := strings.CutPrefix(host[dot:], a.service)
	return ok && (rest == "" || (len(rest) > 1 && rest[0] == '.' && !strings.Contains(rest, "\n")))
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
