package app

import (
	"context"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyendpoints "github.com/aws/smithy-go/endpoints"
)

type countingResolver struct {
	n    atomic.Int64
	next dynamodb.EndpointResolverV2
}

func (c *countingResolver) ResolveEndpoint(ctx context.Context, p dynamodb.EndpointParameters) (smithyendpoints.Endpoint, error) {
	c.n.Add(1)
	return c.next.ResolveEndpoint(ctx, p)
}

// The DynamoDB client's endpoint is resolved once per distinct setting, not
// per call, and comes out as the SDK's own resolver gives it; a table named
// by its ARN (account-based endpoints) and an error are not cached.
func TestDynamoDBEndpointsResolvedOnce(t *testing.T) {
	ctx := context.Background()
	counting := &countingResolver{next: dynamodb.NewDefaultEndpointResolverV2()}
	o := dynamodb.Options{EndpointResolverV2: counting}
	CacheDynamoDBEndpoints(&o)
	r := o.EndpointResolverV2

	params := func(region, table string) dynamodb.EndpointParameters {
		return dynamodb.EndpointParameters{Region: aws.String(region), UseDualStack: aws.Bool(false), UseFIPS: aws.Bool(false),
			AccountIdEndpointMode: aws.String("preferred"), ResourceArn: aws.String(table)}
	}
	for _, table := range []string{"gifq-webhooks", "gifq-webhooks", "another-table"} {
		got, err := r.ResolveEndpoint(ctx, params("us-east-1", table))
		want, werr := dynamodb.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, params("us-east-1", table))
		if err != nil || werr != nil || got.URI.String() != want.URI.String() || !reflect.DeepEqual(got.Headers, want.Headers) {
			t.Fatalf("%s: %v, %v; want %v, %v", table, got.URI.String(), err, want.URI.String(), werr)
		}
	}
	if n := counting.n.Load(); n != 1 {
		t.Errorf("three calls with one setting resolved %d times, want 1", n)
	}
	eu, err := r.ResolveEndpoint(ctx, params("eu-west-1", "gifq-webhooks"))
	if err != nil || eu.URI.Host != "dynamodb.eu-west-1.amazonaws.com" || counting.n.Load() != 2 {
		t.Errorf("another region: %s, %v, %d resolutions", eu.URI.String(), err, counting.n.Load())
	}
	fips := params("us-east-1", "gifq-webhooks")
	fips.UseFIPS = aws.Bool(true)
	if e, err := r.ResolveEndpoint(ctx, fips); err != nil || e.URI.Host != "dynamodb-fips.us-east-1.amazonaws.com" {
		t.Errorf("FIPS: %s, %v", e.URI.String(), err)
	}
	local := params("us-east-1", "t")
	local.Endpoint = aws.String("http://127.0.0.1:8000")
	if e, err := r.ResolveEndpoint(ctx, local); err != nil || e.URI.Host != "127.0.0.1:8000" {
		t.Errorf("an endpoint override: %s, %v", e.URI.String(), err)
	}

	arn := params("us-east-1", "arn:aws:dynamodb:us-east-1:123456789012:table/gifq-webhooks")
	before := counting.n.Load()
	for range 2 {
		if _, err := r.ResolveEndpoint(ctx, arn); err != nil {
			t.Fatal(err)
		}
	}
	if n := counting.n.Load() - before; n != 2 {
		t.Errorf("a table by its ARN: resolved %d times for 2 calls, want 2 (not cached)", n)
	}

	bad := params("us-east-1", "t")
	bad.Endpoint = aws.String("not a url")
	bad.UseFIPS = aws.Bool(true) // FIPS with a custom endpoint: the rules refuse it
	before = counting.n.Load()
	for range 2 {
		if _, err := r.ResolveEndpoint(ctx, bad); err == nil {
			t.Fatal("no error for FIPS with a custom endpoint")
		}
	}
	if n := counting.n.Load() - before; n != 2 {
		t.Errorf("an error: resolved %d times for 2 calls, want 2 (not cached)", n)
	}
}

// Every endpoint parameter of the SDK's DynamoDB client is in the cache's
// key (or keeps a call out of the cache): an SDK upgrade that adds one fails
// here until dynamoDBEndpointKey reads it.
func TestDynamoDBEndpointKeyHasEveryParameter(t *testing.T) {
	typ := reflect.TypeFor[dynamodb.EndpointParameters]()
	for i := range typ.NumField() {
		if name := typ.Field(i).Name; !slices.Contains(dynamoDBEndpointKeyFields, name) {
			t.Errorf("dynamodb.EndpointParameters.%s is not in the endpoint cache's key", name)
		}
	}
}

// Finding the cached endpoint allocates nothing.
func TestCachedDynamoDBEndpointAllocatesNothing(t *testing.T) {
	o := dynamodb.Options{}
	CacheDynamoDBEndpoints(&o)
	p := dynamodb.EndpointParameters{Region: aws.String("us-east-1"), UseDualStack: aws.Bool(false), UseFIPS: aws.Bool(false),
		Endpoint: aws.String("http://127.0.0.1:8000"), ResourceArnList: []string{"gifq-webhooks"}}
	ctx := context.Background()
	if _, err := o.EndpointResolverV2.ResolveEndpoint(ctx, p); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = o.EndpointResolverV2.ResolveEndpoint(ctx, p) }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
