package main

// List prices, us-east-1, as docs/scale.md cites them.
const (
	priceAPI       = 3.50 / 1e6   // API Gateway REST, per request (first 333 M a month)
	priceLambdaReq = 0.20 / 1e6   // Lambda, per request
	priceLambdaGBs = 0.0000133334 // Lambda arm64, per GB-second (first 7.5 G GB-s a month)
	priceSQS       = 0.40 / 1e6   // SQS standard, per request (after the first 1 M a month, up to 100 G)
	priceWRU       = 0.625 / 1e6  // DynamoDB on-demand, per write request unit
	priceRRU       = 0.125 / 1e6  // DynamoDB on-demand, per read request unit

	memoryGB    = 0.25 // the functions' 256 MB
	apiDuration = 0.03 // the api function's time per event in AWS (docs/cost.md)
)

// Cost is the day's bill by service, in dollars.
type Cost struct{ API, Lambda, SQS, DynamoDB float64 }

// Total is the sum.
func (c Cost) Total() float64 { return c.API + c.Lambda + c.SQS + c.DynamoDB }

// Bill prices a run's calls.
func (m Metrics) Bill() Cost {
	return Cost{
		API:      m.APIRequests * priceAPI,
		Lambda:   (m.Invocations+m.APIRequests)*priceLambdaReq + (m.LambdaDeliverGBs+m.LambdaAPIGBs)*priceLambdaGBs,
		SQS:      m.SQSRequests * priceSQS,
		DynamoDB: m.WCU*priceWRU + m.RCU*priceRRU,
	}
}
