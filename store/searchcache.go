package store

import (
	"container/list"
	"sync"

	"github.com/quarryhq/quarry/index"
)

// blockCache keeps the blocks searches read, by segment and term, in
// memory across searches, up to a bound on their bytes, dropping the least
// recently used first. It also keeps that a segment has no block of a term,
// so that a term missing from most segments is not asked for again.
//
// A segment's blocks never change once it is live, and a segment's id is
// never given to another: a kept block is the segment's for as long as any
// search reads the segment, and the cache needs no invalidation. Blocks of
// dropped segments are no longer asked for and leave as others come in.
// A blockCache is safe for concurrent use; the blocks it returns share
// their bytes with it and must not be changed.
type blockCache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	items map[blockKey]*list.Element
	lru   list.List // Of *keptBlock, the most recently used first.

	hits, misses int64
}

type blockKey struct {
	seg  int64
	term string
}

// keptBlock is a kept block, or a kept absence (absent).
type keptBlock struct {
	key    blockKey
	block  index.Block
	absent bool
}

// cachedOverhead is what an entry costs besides its postings and term
// (its element, its map slot, its block's fields), roughly.
const cachedOverhead = 160

func (c *keptBlock) cost() int64 {
	return int64(len(c.block.Postings)+len(c.key.term)) + cachedOverhead
}

// newBlockCache returns a cache that keeps up to max bytes of blocks (max
// of 0 or less keeps nothing).
func newBlockCache(max int64) *blockCache {
	return &blockCache{max: max, items: map[blockKey]*list.Element{}}
}

// Get returns segment seg's block of term: found is false when the cache
// does not know it, and otherwise ok says whether the segment has one.
func (c *blockCache) Get(seg int64, term string) (b index.Block, ok, found bool) {
	if c == nil || c.max <= 0 {
		return index.Block{}, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.items[blockKey{seg, term}]
	if e == nil {
		c.misses++
		return index.Block{}, false, false
	}
	c.hits++
	c.lru.MoveToFront(e)
	x := e.Value.(*keptBlock)
	return x.block, !x.absent, true
}

// Put keeps block b of its segment (b.Segment) and term.
func (c *blockCache) Put(b index.Block) {
	c.put(&keptBlock{key: blockKey{b.Segment, b.Term}, block: b})
}

// PutAbsent keeps that segment seg has no block of term.
func (c *blockCache) PutAbsent(seg int64, term string) {
	c.put(&keptBlock{key: blockKey{seg, term}, absent: true})
}

func (c *blockCache) put(x *keptBlock) {
	if c == nil || c.max <= 0 || x.cost() > c.max/8 {
		return // One block never takes more than an eighth of the cache.
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.items[x.key]; e != nil {
		c.size -= e.Value.(*keptBlock).cost()
		c.lru.Remove(e)
	}
	c.items[x.key] = c.lru.PushFront(x)
	c.size += x.cost()
	for c.size > c.max {
		e := c.lru.Back()
		old := e.Value.(*keptBlock)
		c.lru.Remove(e)
		delete(c.items, old.key)
		c.size -= old.cost()
	}
}

// SearchCacheStats is what a blockCache holds and how it served.
type SearchCacheStats struct {
	Bytes    int64 `json:"bytes"`     // What its entries cost.
	MaxBytes int64 `json:"max_bytes"` // Its bound.
	Entries  int   `json:"entries"`
	Hits     int64 `json:"hits"`   // Lookups of a block it knew, since it was made.
	Misses   int64 `json:"misses"` // Lookups of a block it did not.
}

// Stats returns c's figures.
func (c *blockCache) Stats() SearchCacheStats {
	if c == nil {
		return SearchCacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return SearchCacheStats{Bytes: c.size, MaxBytes: c.max, Entries: len(c.items), Hits: c.hits, Misses: c.misses}
}

// SearchCacheStats returns what db keeps of the search index's blocks in
// memory (Options.SearchCache), and how often searches found them there.
func (db *DB) SearchCacheStats() SearchCacheStats { return db.blocks.Stats() }
