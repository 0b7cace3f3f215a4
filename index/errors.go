package index

import (
	"errors"
	"io/fs"
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
