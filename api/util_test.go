package api_test

import (
	"io"
	"strconv"
	"strings"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }
