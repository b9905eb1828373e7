package app_test

import (
	"context"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	smithyendpoints "github.com/aws/smithy-go/endpoints"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/localstack/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type staticResolver struct{ u url.URL }

func (r staticResolver) ResolveEndpoint(context.Context, dynamodb.EndpointParameters) (smithyendpoints.Endpoint, error) {
	return smithyendpoints.Endpoint{URI: r.u}, nil
}

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkSDKGetItem(b *testing.B) {
	env := testenv.New(b)
	u, _ := url.Parse(env.DynamoURL)
	variants := map[string]func(*dynamodb.Options){
		"base": func(o *dynamodb.Options) {},
		"noratelimit": func(o *dynamodb.Options) {
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.RateLimiter = ratelimit.None })
		},
		"nochecksum": func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true },
		"staticendpoint": func(o *dynamodb.Options) { o.EndpointResolverV2 = staticResolver{*u} },
		"all": func(o *dynamodb.Options) {
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.RateLimiter = ratelimit.None })
			o.DisableValidateResponseChecksum = true
			o.EndpointResolverV2 = staticResolver{*u}
		},
	}
	for _, name := range []string{"base", "noratelimit", "nochecksum", "staticendpoint", "all", "base"} {
		b.Run(name, func(b *testing.B) {
			db := dynamodb.NewFromConfig(emulator.Config(), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(env.DynamoURL); variants[name](o) })
			k := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "X"}, "sk": &types.AttributeValueMemberS{Value: "Y"}}
			c0 := cpu()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &env.Table, Key: k, ConsistentRead: aws.Bool(true)}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpu()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
