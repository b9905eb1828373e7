package store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/schema"
)

// TableAdmin is the part of the client that creates tables.
type TableAdmin interface {
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

// CreateTableInput is schema.Table as a CreateTable request (on-demand),
// with the table's stream when stream is set: only where a reader of the
// stream runs (the stats). Deployed, the stream costs a write nothing; in
// dynoxide every write appends to it, and a busy table with one slowed
// its writes until 1,600 deliveries took minutes, not seconds.
func CreateTableInput(name string, stream bool) *dynamodb.CreateTableInput {
	t := schema.Table
	attrs := map[string]string{t.PK.Name: t.PK.Type, t.SK.Name: t.SK.Type}
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		KeySchema:   keySchema(t.PK, t.SK),
	}
	if stream {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(t.StreamView)}
	}
	for _, ix := range t.Indexes {
		attrs[ix.PK.Name], attrs[ix.SK.Name] = ix.PK.Type, ix.SK.Type
		p := &types.Projection{ProjectionType: types.ProjectionType(ix.Projection)}
		if len(ix.NonKey) > 0 {
			p.NonKeyAttributes = ix.NonKey
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName: aws.String(ix.Name), KeySchema: keySchema(ix.PK, ix.SK), Projection: p,
		})
	}
	for name, typ := range attrs {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(name), AttributeType: types.ScalarAttributeType(typ),
		})
	}
	return in
}

func keySchema(pk, sk schema.Key) []types.KeySchemaElement {
	return []types.KeySchemaElement{
		{AttributeName: aws.String(pk.Name), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String(sk.Name), KeyType: types.KeyTypeRange},
	}
}

// CreateTable creates the table with its indexes and TTL; an existing table
// is left as it is.
func CreateTable(ctx context.Context, db TableAdmin, name string, stream bool) error {
	_, err := db.CreateTable(ctx, CreateTableInput(name, stream))
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(schema.Table.TTLAttribute), Enabled: aws.Bool(true),
		},
	})
	return err
}
