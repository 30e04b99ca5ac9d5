package opt

import "context"

type observerKey struct{}

// WithObserver returns a context under which the engine reports each
// access it chooses to fn: the access testdata records them this way,
// and a caller can log why a request was answered as it was.
func WithObserver(ctx context.Context, fn func(*Access)) context.Context {
	return context.WithValue(ctx, observerKey{}, fn)
}

// Observe reports a to the observer of ctx, if any.
func Observe(ctx context.Context, a *Access) {
	if fn, ok := ctx.Value(observerKey{}).(func(*Access)); ok {
		fn(a)
	}
}
