package dashboard

import (
	"context"
	"encoding/json"

	"reportdb/service"
)

// queryAll decodes every row into a T.
func queryAll[T any](ctx context.Context, q service.Querier, req service.Request) ([]T, int, error) {
	var out []T
	total, err := q.Query(ctx, req, func(row json.RawMessage) error {
		var v T
		if err := json.Unmarshal(row, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, total, err
}
