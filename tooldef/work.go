package tooldef

import (
	"context"
	"strings"

	"github.com/quarryhq/quarry/internal/pyrepr"
)

// kin-openapi v0.152.0 cannot be interrupted (its loader never looks at a
// context, its validator never at ours), and some small documents make it
// work for a long time:
//
//   - Its loader resolves a reference by copying the object the reference
//     names, so along a chain of references (S0 → S1 → … → SN) each one is
//     resolved again for every reference that leads into the chain: 8,000
//     links took 40 s. It also walks the whole target of a reference again
//     for every reference to it, so k references to a schema of n nodes
//     cost k·n.
//   - Its validator starts afresh at every schema it reaches from outside a
//     schema (each component, each parameter, media type and header), and
//     at every object it reaches through a reference: a chain of schemas
//     that each hold the next, or a response of n schemas referred to by k
//     operations, costs k·n again.
//
// checkWork therefore estimates, from the document alone and in time linear
// in its size (or bounded by maxWork), how much work kin-openapi would do,
// and rejects the document if that passes maxWork, or if a reference starts
// a chain of more than maxRefHops references. The estimate errs on the side
// of counting too much: it counts every JSON value in what a reference
// names, where kin-openapi skips examples and extensions.

// maxWork bounds the work checkWork lets kin-openapi do on one document, in
// the units it counts (about a JSON value visited). kin-openapi took 0.1 to
// 1 µs a unit on the documents of the tests, so this is a second at most:
// about what a valid definition of 1 MiB costs it anyway. The largest
// real-world definitions tried (200 KB to 1.1 MB) need about 270,000.
const maxWork = 2_000_000

// objectWeight is the work of an object, next to that of any other value,
// 1: kin-openapi makes a Go value of each object (a schema, mostly), which
// costs it about three times as much as a string or a number.
const objectWeight = 3

// ctxCheckEvery is how many units of work pass between two looks at the
// context.
const ctxCheckEvery = 1 << 12

// A chain describes where a reference leads.
type chain struct {
	end  *value // the first value on the way that is not a reference, or nil
	hops int    // references followed to reach it, the reference itself included
	cost int    // the work of kin-openapi's loader to resolve it
}

// A workCounter estimates kin-openapi's work on one document.
type workCounter struct {
	ctx    context.Context
	doc    *value
	left   int               // units of work left
	chains map[string]chain  // per $ref value, what it leads to
	ends   map[*value]*value // per reference object, what it leads to
	seen   map[*value]int    // per schema, the last reach that counted it
	reachs int               // reaches so far
}

// checkWork returns an error if kin-openapi would do more than maxWork units
// of work on doc, if a reference in doc leads through more than maxRefHops
// references, or if ctx ends meanwhile.
func checkWork(ctx context.Context, doc *value) error {
	w := &workCounter{ctx: ctx, doc: doc, left: maxWork, chains: make(map[string]chain),
		ends: make(map[*value]*value), seen: make(map[*value]int)}
	if err := w.spend(doc.weight); err != nil {
		return err
	}
	if err := w.load(doc); err != nil {
		return err
	}
	return w.validate()
}

// spend uses up n units of work and returns an error once there are none
// left, or once the context has ended.
func (w *workCounter) spend(n int) error {
	before := w.left
	w.left -= n
	if w.left < 0 {
		return invalid(fmtTooMuchWork, maxWork)
	}
	if before/ctxCheckEvery != w.left/ctxCheckEvery {
		return w.ctx.Err()
	}
	return nil
}

// load counts the work of kin-openapi's loader: for every reference in v,
// the values of every object along the chain it starts.
func (w *workCounter) load(v *value) error {
	if r := v.get("$ref"); r != nil && r.kind == kindString {
		c, ok := w.follow(r.str, 0)
		if !ok {
			return invalid(fmtRefChain, pyrepr.Quote(v.pointer()), maxRefHops)
		}
		w.ends[v] = c.end
		if err := w.spend(c.cost); err != nil {
			return err
		}
	}
	for _, m := range v.members {
		if err := w.load(m.value); err != nil {
			return err
		}
	}
	for _, e := range v.elems {
		if err := w.load(e); err != nil {
			return err
		}
	}
	return nil
}

// follow returns where the reference ref leads, ref being depth references
// into a chain; ok is false if the chain is longer than maxRefHops. A
// reference that leads back into a chain being followed ends the chain, as
// it does in kin-openapi.
func (w *workCounter) follow(ref string, depth int) (c chain, ok bool) {
	if c, ok := w.chains[ref]; ok {
		return c, depth+c.hops <= maxRefHops
	}
	if depth >= maxRefHops {
		return chain{}, false
	}
	w.chains[ref] = chain{} // Leading back here ends the chain.
	budget := maxRefHops
	t := resolve(w.doc, ref, &budget)
	// kin-openapi parses the reference, then goes down its path one token
	// at a time, which costs about eight units a token.
	c = chain{end: t, hops: 1, cost: len(ref) + 8*strings.Count(ref, "/") + maxRefHops - budget}
	if t != nil {
		c.cost += t.weight
		if r := t.get("$ref"); r != nil && r.kind == kindString {
			next, ok := w.follow(r.str, depth+1)
			if !ok {
				return chain{}, false
			}
			c.end, c.hops, c.cost = next.end, c.hops+next.hops, c.cost+next.cost
		}
	}
	w.chains[ref] = c
	return c, true
}

// end returns where the reference object v leads, v itself if it is not a
// reference, or nil. Every reference has been followed by load already.
func (w *workCounter) end(v *value) *value {
	if t, ok := w.ends[v]; ok {
		return t
	}
	return v
}

// validate counts the work of kin-openapi's validator, which walks the
// document, goes into what each reference it meets names, and walks every
// schema it meets outside a schema from scratch.
func (w *workCounter) validate() error {
	for _, m := range w.doc.members {
		if m.key != "components" {
			if err := w.walk(m.value, nil); err != nil {
				return err
			}
			continue
		}
		for _, c := range m.value.object() {
			if c.key != "schemas" {
				if err := w.walk(c.value, nil); err != nil {
					return err
				}
				continue
			}
			for _, s := range c.value.object() {
				if err := w.reach(s.value); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// walk counts the values of v, a part of the document outside schemas,
// going into what its references name (those not already on the way, in
// open), and into each schema from scratch.
func (w *workCounter) walk(v *value, open map[*value]bool) error {
	if err := w.spend(weightOf(v)); err != nil {
		return err
	}
	if t := w.end(v); t != v {
		if t == nil || open[t] {
			return nil
		}
		if open == nil {
			open = make(map[*value]bool)
		}
		open[t] = true
		defer delete(open, t)
		return w.walk(t, open)
	}
	for _, m := range v.members {
		var err error
		if m.key == "schema" || m.key == "itemSchema" {
			err = w.reach(m.value)
		} else {
			err = w.walk(m.value, open)
		}
		if err != nil {
			return err
		}
	}
	for _, e := range v.elems {
		if err := w.walk(e, open); err != nil {
			return err
		}
	}
	return nil
}

// reach counts the schemas reachable from the schema s, and the ways to
// each, as kin-openapi's validator does when it starts at s. It checks a
// schema it has seen much faster than it makes one: a unit each.
func (w *workCounter) reach(s *value) error {
	w.reachs++
	stack := []*value{s}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := w.spend(1); err != nil {
			return err
		}
		if !v.isObject() || w.seen[v] == w.reachs {
			continue
		}
		w.seen[v] = w.reachs
		if err := w.spend(1); err != nil {
			return err
		}
		if t := w.end(v); t != v && t != nil {
			stack = append(stack, t)
		}
		for _, m := range v.members { // A reference's siblings are a schema in 3.1.
			stack = appendSubschemas(stack, m, false)
		}
	}
	return nil
}

// weightOf returns the work of v alone, without its members or elements.
func weightOf(v *value) int {
	if v.isObject() {
		return objectWeight
	}
	return 1
}
