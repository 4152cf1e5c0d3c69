package pdapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinel errors returned (wrapped) by Client methods; test them with errors.Is.
var (
	// ErrNotFound: PD answered 404, e.g. GetStore of an unknown store ID.
	ErrNotFound = errors.New("not found in PD")
	// ErrTiKVNotBootstrapped: PD has no Raft cluster yet because no TiKV store has registered; PD answers
	// every store and scheduler API with "TiKV cluster not bootstrapped". The operator treats it as
	// "no stores yet" (status.tikv.bootStrapped=false), not as a failure.
	ErrTiKVNotBootstrapped = errors.New("PD: TiKV cluster not bootstrapped")
	// ErrPlacementRulesDisabled: PD answered a placement-rules API (`/pd/api/v1/config/rules…`) with 412
	// because replication.enable-placement-rules is false; PD then keeps no rules in force.
	ErrPlacementRulesDisabled = errors.New("PD: placement rules feature is disabled")
)

// notBootstrappedText is the part of PD's ErrNotBootstrapped message that every PD version shares:
// "[PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV first".
const notBootstrappedText = "TiKV cluster not bootstrapped"

// placementDisabledText is the part of PD's answer (412) to a rules API while placement rules are off that
// every PD version shares: "placement rules feature is disabled", with the
// "[PD:placement:ErrPlacementDisabled]" prefix since PD 5.
const placementDisabledText = "placement rules feature is disabled"

// maxErrorTextLen bounds the PD error text kept in a StatusError.
const maxErrorTextLen = 1024

// StatusError is PD answering a request with an unexpected HTTP status. It unwraps to ErrNotFound for 404,
// to ErrTiKVNotBootstrapped and ErrPlacementRulesDisabled when PD says so; errors.As gives callers the
// status code.
type StatusError struct {
	// Method and URL are those of the request, e.g. "GET" and "http://basic-pd.ns:2379/pd/api/v1/stores".
	Method, URL string
	// StatusCode is the HTTP status PD answered.
	StatusCode int
	// Message is PD's error text: a JSON string body unquoted, the msg of an errcode body, or the raw
	// body (truncated).
	Message string
}

// Error renders "GET <url>: 500 Internal Server Error: <PD's text>".
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s %s: %d %s", e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Unwrap maps the status and PD's text to a sentinel error, or nil when none applies.
func (e *StatusError) Unwrap() error {
	switch {
	case strings.Contains(e.Message, notBootstrappedText):
		return ErrTiKVNotBootstrapped
	case strings.Contains(e.Message, placementDisabledText):
		return ErrPlacementRulesDisabled
	case e.StatusCode == http.StatusNotFound:
		return ErrNotFound
	}
	return nil
}

// IsStatus reports whether err is (or wraps) a StatusError with one of the given codes.
func IsStatus(err error, codes ...int) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	for _, code := range codes {
		if se.StatusCode == code {
			return true
		}
	}
	return false
}

// newStatusError builds the error for an unexpected status, extracting PD's text from body.
func newStatusError(method, url string, status int, body []byte) *StatusError {
	return &StatusError{Method: method, URL: url, StatusCode: status, Message: errorText(body)}
}

// errorText extracts PD's error message from a response body. PD renders most errors as a bare JSON
// string (`"[PD:core:ErrStoreNotFound]store 5 not found"`), invalid input as an errcode object
// (`{"code":"input","msg":"..."}`), and some middlewares and proxies answer plain text.
func errorText(body []byte) string {
	body = bytes.TrimSpace(body)
	var text string
	if err := json.Unmarshal(body, &text); err == nil {
		return truncate(text)
	}
	var coded ErrorCodeJSON
	if err := json.Unmarshal(body, &coded); err == nil && (coded.Code != "" || coded.Msg != "") {
		return truncate(coded.Code + ": " + coded.Msg)
	}
	return truncate(string(body))
}

func truncate(text string) string {
	text = strings.TrimSpace(text)
	if len(text) > maxErrorTextLen {
		return text[:maxErrorTextLen] + "…"
	}
	return text
}
