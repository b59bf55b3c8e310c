package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// APIError is a non-2xx answer of the service. The service sends one of two
// bodies (swagger definitions "error" and "infra_error"):
//
//	{"code":"409","href":"","id":409,"kind":"Error","reason":"..."}
//	{"code":401,"message":"..."}
//
// Code is the body's code as text ("" when the body had none); Reason is its
// reason or message, or a snippet of a non-JSON body such as a proxy's HTML
// error page.
type APIError struct {
	StatusCode int
	Code       string
	Reason     string
}

func (e *APIError) Error() string {
	reason := e.Reason
	if reason == "" {
		reason = strings.ToLower(http.StatusText(e.StatusCode))
	}
	return fmt.Sprintf("service answered %d: %s", e.StatusCode, reason)
}

// IsStatus reports whether err is, or wraps, an *APIError with the status.
func IsStatus(err error, status int) bool {
	return StatusCode(err) == status
}

// StatusCode returns the HTTP status of the *APIError in err, or 0 when err
// holds none (a network error, a decode error, nil).
func StatusCode(err error) int {
	var e *APIError
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// maxReasonSnippet bounds the text kept from a non-JSON error body.
const maxReasonSnippet = 256

// decodeAPIError builds the error for a non-2xx answer with body b.
func decodeAPIError(status int, b []byte) *APIError {
	e := &APIError{StatusCode: status}
	var body struct {
		Code    json.RawMessage `json:"code"`
		Reason  string          `json:"reason"`
		Message string          `json:"message"`
	}
	if err := json.Unmarshal(b, &body); err == nil {
		e.Code = rawCode(body.Code)
		e.Reason = body.Reason
		if e.Reason == "" {
			e.Reason = body.Message
		}
		return e
	}
	e.Reason = snippet(b)
	return e
}

// rawCode returns a JSON string or number as text.
func rawCode(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String()
	}
	return strconv.Quote(string(raw))
}

// snippet returns the start of a non-JSON body on one line.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > maxReasonSnippet {
		s = s[:maxReasonSnippet]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}
