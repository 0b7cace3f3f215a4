package index

import (
	"errors"
	"io/fs"
	"net"
	"strings"
)

// ErrLocked means another reindex holds index.lock.
var ErrLocked = errors.New("index is locked by another reindex")

// ErrInconsistent marks committed files that disagree with each other.
var ErrInconsistent = errors.New("index files disagree")

// ErrOtherVersion means the index was built for another model or chunking.
var ErrOtherVersion = errors.New("index was built by another model or chunking; it will be rebuilt")

// IsDamaged reports whether err says the committed index files are damaged:
// a checksum or size that does not match, files that disagree, a vector
// that is not unit length. The cure is to rebuild the index. A file this
// process may not read is not damage: rebuilding would throw away a sound
// index (and the re-embedding of every file) that a chmod or chown gives
// back.
func IsDamaged(err error) bool {
	return errors.Is(err, ErrInconsistent) && !errors.Is(err, fs.ErrPermission)
}

// Unreachable reports whether err says the store's database could not be
// reached or dropped the connection (a refused dial, SQLSTATE class 08, or
// 57P01–57P03: shut down, crashed, starting). Such a failure passes: the
// backend connects again on the next call.
func Unreachable(err error) bool {
	var netErr *net.OpError
	if errors.As(err, &netErr) {
		return true
	}
	var coded interface{ SQLState() string }
	if errors.As(err, &coded) {
		state := coded.SQLState()
		return strings.HasPrefix(state, "08") || strings.HasPrefix(state, "57P0")
	}
	return false
}
