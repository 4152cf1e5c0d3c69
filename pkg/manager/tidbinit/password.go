package tidbinit

import (
	"crypto/rand"
	"fmt"
)

// PasswordLength is the length of a generated root password.
const PasswordLength = 32

// passwordAlphabet has 62 letters and digits: no character needs quoting in
// a shell, a URL or a MySQL client's command line.
const passwordAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// NewPassword returns PasswordLength characters of passwordAlphabet drawn
// uniformly from crypto/rand (bytes ≥ 248 are rejected, so no letter is
// likelier than another): about 190 bits. It errors only when the system's
// random source fails.
func NewPassword() (string, error) {
	const limit = 256 - 256%len(passwordAlphabet)
	out := make([]byte, 0, PasswordLength)
	buf := make([]byte, 2*PasswordLength)
	for len(out) < PasswordLength {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("random password: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < PasswordLength {
				out = append(out, passwordAlphabet[int(b)%len(passwordAlphabet)])
			}
		}
	}
	return string(out), nil
}
