package api

import "testing"

func TestStatusCache(t *testing.T) {
	c := newStatusCache()
	big := listing{make([]byte, statusCacheBytes/3)}
	c.put("admin", 1, big)
	if l, _ := c.get("admin", 1); l == nil {
		t.Fatal("a listing just cached is not served")
	}
	if l, hint := c.get("admin", 2); l != nil || hint < big.size() {
		t.Fatalf("a stale listing: %v, hint %d; want nil and a hint of at least %d", l != nil, hint, big.size())
	}
	if c.bytes != 0 {
		t.Errorf("a stale listing still holds %d bytes", c.bytes)
	}
	c.put("admin", 2, big)
	c.put("groups,1", 2, big)
	c.put("groups,2", 3, big)
	c.put("groups,3", 3, big) // over budget: the oldest version goes first
	if c.bytes > statusCacheBytes {
		t.Errorf("the cache holds %d bytes, over its budget of %d", c.bytes, statusCacheBytes)
	}
	if l, _ := c.get("groups,3", 3); l == nil {
		t.Error("the newest listing was dropped")
	}
	if l, _ := c.get("groups,2", 3); l == nil {
		t.Error("a listing of the newest version was dropped before older ones")
	}
	c.put("groups,2", 2, listing{[]byte("{}")}) // older than the one cached
	if l, _ := c.get("groups,2", 3); l == nil || l.size() != big.size() {
		t.Error("an older listing replaced a newer one")
	}
	c.put("huge", 4, listing{make([]byte, statusCacheBytes+1)})
	if l, hint := c.get("huge", 4); l != nil || hint == 0 {
		t.Errorf("a listing over the whole budget was cached (%v) or its size forgotten (%d)", l != nil, hint)
	}
	if got := (listing{[]byte(`{"a":1}`), nil, []byte(`{"b":2}`)}).size(); got != len(`[{"a":1},{"b":2}]`) {
		t.Errorf("size = %d", got)
	}
}
