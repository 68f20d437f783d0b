package tooldef

import (
	"context"
	"crypto/sha256"
	"sync"

	"github.com/quarryhq/quarry"
)

// Cache remembers the outcome of Validate for the definitions it has seen
// last, by their SHA-256: clients send the same definition back with most
// updates, and a full validation of a realistic document costs about a
// millisecond. Outcomes depend on the document alone, so a remembered one
// is never stale. A Cache holds at most its budget of definition bytes,
// forgetting the oldest first, and is safe for concurrent use.
//
// A Cache also bounds the validations that run at once: a definition it
// has not seen waits up to 2 seconds for one of its slots, and fails with
// Code quarry.EUNAVAILABLE if none frees up. A validation whose caller has
// gone keeps its slot until kin-openapi is done with it.
type Cache struct {
	mu       sync.Mutex
	run      runner
	maxBytes int // Bytes of definitions it may remember.
	bytes    int
	results  map[[sha256.Size]byte]result
	order    [][sha256.Size]byte // Oldest first; forgotten first.
}

type result struct {
	methods []Method
	err     error
	size    int
}

// NewCache returns a Cache that remembers the outcomes of up to maxBytes
// bytes of definitions, and validates at most concurrent definitions at
// once (at least one).
func NewCache(maxBytes, concurrent int) *Cache {
	return &Cache{
		run:      runner{budget: timeBudget, slots: make(chan struct{}, max(concurrent, 1)), wait: slotWait},
		maxBytes: maxBytes,
		results:  map[[sha256.Size]byte]result{},
	}
}

// Validate is the package's Validate, remembered, and bounded as the Cache
// says. The returned methods are shared between callers and must not be
// changed.
func (c *Cache) Validate(ctx context.Context, def []byte) ([]Method, error) {
	if len(def) > c.maxBytes {
		return c.run.validate(ctx, def)
	}
	key := sha256.Sum256(def)
	c.mu.Lock()
	r, ok := c.results[key]
	c.mu.Unlock()
	if ok {
		return r.methods, r.err
	}
	methods, err := c.run.validate(ctx, def)
	if ctx.Err() != nil || err == errTooSlow || err == errBusy || quarry.ErrorCode(err) == quarry.EINTERNAL {
		return methods, err // Cut short: not an outcome of the document.
	}
	for i := range methods { // The specs point into def, which the caller owns.
		methods[i].Spec = append([]byte(nil), methods[i].Spec...)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.results[key]; !ok {
		for c.bytes+len(def) > c.maxBytes {
			c.bytes -= c.results[c.order[0]].size
			delete(c.results, c.order[0])
			c.order = c.order[1:]
		}
		c.results[key] = result{methods, err, len(def)}
		c.order = append(c.order, key)
		c.bytes += len(def)
	}
	return methods, err
}
