package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func getConn(t *testing.T, u string) *pgx.Conn {
	c, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
