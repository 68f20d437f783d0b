//go:build !unix

package store

import (
	"errors"
	"os"
)

// Without flock, a database in use is not detected: stop the server
// before restoring.

var errFileInUse = errors.New("locked")

func holdShared(path string) (*os.File, error)    { return os.Open(path) }
func holdExclusive(path string) (*os.File, error) { return os.Open(path) }
