package app

import (
	"context"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyendpoints "github.com/aws/smithy-go/endpoints"
)

// The DynamoDB client resolves its endpoint on every call: it binds the
// call's parameters and runs the service's endpoint rules (region,
// partition, FIPS, dual-stack, account-based endpoints), about 9 µs of the
// ~190 µs a call costs our process, 4-5 % of the deliver function's CPU per
// delivery (docs/performance.md "Our CPU per delivery"). The answer depends
// only on the client's settings and, for a table given by its ARN, on the
// ARN: for the table names the functions use, it is the same on every
// call, so it is resolved once.

// maxCachedEndpoints bounds the cache: one client has one region and one
// endpoint, so one entry is the usual count.
const maxCachedEndpoints = 16

// CacheDynamoDBEndpoints is a DynamoDB client option that resolves each
// distinct endpoint once (the functions' clients: onlambda.FromEnv).
func CacheDynamoDBEndpoints(o *dynamodb.Options) {
	next := o.EndpointResolverV2
	if next == nil {
		next = dynamodb.NewDefaultEndpointResolverV2()
	}
	o.EndpointResolverV2 = &dynamoDBEndpoints{next: next}
}

type dynamoDBEndpoints struct {
	next dynamodb.EndpointResolverV2
	mu   sync.RWMutex
	m    map[endpointKey]smithyendpoints.Endpoint
}

// ResolveEndpoint answers from the cache when the parameters name no ARN.
// The endpoint is handed out as a value; the SDK's middleware reads its
// header and property maps and does not change them.
func (r *dynamoDBEndpoints) ResolveEndpoint(ctx context.Context, p dynamodb.EndpointParameters) (smithyendpoints.Endpoint, error) {
	key, ok := dynamoDBEndpointKey(p)
	if !ok {
		return r.next.ResolveEndpoint(ctx, p)
	}
	r.mu.RLock()
	e, hit := r.m[key]
	r.mu.RUnlock()
	if hit {
		return e, nil
	}
	e, err := r.next.ResolveEndpoint(ctx, p)
	if err != nil {
		return e, err // not kept: the next call tries again
	}
	r.mu.Lock()
	if r.m == nil {
		r.m = map[endpointKey]smithyendpoints.Endpoint{}
	}
	if len(r.m) < maxCachedEndpoints {
		r.m[key] = e
	}
	r.mu.Unlock()
	return e, nil
}

// dynamoDBEndpointKeyFields are the parameters the key is made of, or that
// make it not cached: a parameter a newer SDK adds fails
// TestDynamoDBEndpointKeyHasEveryParameter until it is added here.
var dynamoDBEndpointKeyFields = []string{"Region", "Endpoint", "AccountId", "AccountIdEndpointMode",
	"UseDualStack", "UseFIPS", "IsSearchOperation", "ResourceArn", "ResourceArnList"}

// endpointKey is what the endpoint rules read of the parameters other than
// a table's name: each string with whether it is set, each bool as unset,
// false or true (two bits).
type endpointKey struct {
	region, endpoint, accountID, accountIDMode string
	set                                        uint32
}

// dynamoDBEndpointKey is p's key; false when p names a resource by ARN (its
// account and region then choose the endpoint: not cached).
func dynamoDBEndpointKey(p dynamodb.EndpointParameters) (endpointKey, bool) {
	if p.ResourceArn != nil && strings.HasPrefix(*p.ResourceArn, "arn:") {
		return endpointKey{}, false
	}
	for _, a := range p.ResourceArnList {
		if strings.HasPrefix(a, "arn:") {
			return endpointKey{}, false
		}
	}
	var k endpointKey
	for i, f := range [...]struct {
		v   *string
		dst *string
	}{{p.Region, &k.region}, {p.Endpoint, &k.endpoint}, {p.AccountId, &k.accountID}, {p.AccountIdEndpointMode, &k.accountIDMode}} {
		if f.v != nil {
			*f.dst = *f.v
			k.set |= 1 << i
		}
	}
	for i, v := range [...]*bool{p.UseDualStack, p.UseFIPS, p.IsSearchOperation} {
		if v != nil {
			k.set |= 1 << (4 + 2*i)
			if *v {
				k.set |= 1 << (5 + 2*i)
			}
		}
	}
	return k, true
}
