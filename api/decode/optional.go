package decode

// Optional is a request field that may be absent, JSON null, or a value: the
// tri-state of a pydantic field declared `T | None = None`.
type Optional[T any] struct {
	Present bool // The field was in the request.
	Null    bool // It was JSON null (Present is then true too).
	Value   T    // The value, when Present and not Null.
}

// Set reports whether the field holds a value (present and not null).
func (o Optional[T]) Set() bool { return o.Present && !o.Null }

// optional is implemented by every *Optional[T], so that plans can
// recognise the type.
type optional interface{ optional() }

func (*Optional[T]) optional() {}
