//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// A store that has a SQLite database open holds a shared flock on its file,
// and Restore takes the exclusive one before it replaces the file: so a
// database in use is never replaced. flock locks are apart from the fcntl
// locks SQLite takes itself, on Linux and the BSDs alike.

// errFileInUse is returned when a lock is held by another.
var errFileInUse = errors.New("locked")

// holdShared opens path and takes a shared lock on it, held until the file
// is closed.
func holdShared(path string) (*os.File, error) {
	return hold(path, syscall.LOCK_SH)
}

// holdExclusive opens path and takes the exclusive lock on it, held until
// the file is closed.
func holdExclusive(path string) (*os.File, error) {
	return hold(path, syscall.LOCK_EX)
}

func hold(path string, how int) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errFileInUse
		}
		return nil, err
	}
	return f, nil
}
