package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// Static egress IPs (context egressStaticIps, off by default; docs/deploy.md,
// docs/cost.md). Receivers behind firewalls allowlist the addresses webhooks
// come from. Lambda functions outside a VPC send from AWS's shared address
// ranges, so the option puts the deliver function (the only one that calls
// receivers) in private subnets of its own VPC, with one NAT gateway and one
// Elastic IP per availability zone: every delivery leaves from one of those
// IPs, and an AZ outage takes only its own gateway away.
//
// What deliver reaches from the VPC:
//   - DynamoDB through a gateway endpoint: free, and every attempt reads and
//     writes the table, so that traffic never pays NAT processing.
//   - SQS through the NAT gateways, not an interface endpoint. deliver only
//     sends to SQS (retries, deferrals, dead letters; the event source
//     mapping's polling is Lambda's, outside the VPC): kilobytes per message,
//     at $0.045/GB of NAT processing. An interface endpoint costs about
//     $7.30 a month per AZ before any traffic, plus $0.01/GB: it pays off
//     only past about 210 GB a month of sends per AZ (7.30 / 0.035).
//   - X-Ray, and any other AWS API, through the NAT gateways as well.
//
// The api function gets the addresses as EGRESS_IPS (GET /v1/egress-ips),
// and the stack outputs them as EgressIps.

// MaxEgressAZs bounds egressAzs: each AZ takes one Elastic IP, and a
// region's default quota is 5 per account (shared with every other use of
// the account there), so more could never deploy without a quota increase.
// The region must also have that many zones.
const MaxEgressAZs = 5

// EgressVPCCIDR is the egress VPC's range: the public subnets take a /24 per
// AZ (only the NAT gateways live there), deliver's private subnets a /20 per
// AZ (each concurrent execution environment takes an address).
const EgressVPCCIDR = "10.0.0.0/16"

// Egress is what the option adds, for tests.
type Egress struct {
	VPC           awsec2.Vpc
	IPs           []awsec2.CfnEIP // one per AZ, in AZ order
	SecurityGroup awsec2.SecurityGroup
	IPList        *string // the addresses, comma separated (resolved at deploy)
}

// Egress nag suppressions, each with why.
var egressNagSuppressions = []NagSuppression{
	{Rule: "AwsSolutions-VPC7", Reason: "No VPC flow logs: the VPC carries only deliver's outbound calls, and deliver " +
		"logs every attempt (endpoint, status, duration) itself; flow logs would add a per-GB ingestion cost to " +
		"every delivery without telling more."},
}

// addEgress builds the option when the configuration asks for it.
func addEgress(s *Stack) *Egress {
	cfg := s.Config
	if !cfg.EgressStaticIPs {
		return nil
	}
	stack := s.Stack
	n := cfg.EgressAZs
	// The stack is environment-agnostic, where CDK would pick at most two
	// AZs; the zones are chosen at deploy time with Fn::GetAZs instead.
	azs := make([]*string, n)
	ips := make([]awsec2.CfnEIP, n)
	allocations := make([]*string, n)
	refs := make([]*string, n)
	for i := range n {
		azs[i] = awscdk.Fn_Select(jsii.Number(float64(i)), awscdk.Fn_GetAzs(jsii.String("")))
		// Ids by position, so that adding an AZ later keeps the existing IPs.
		ips[i] = awsec2.NewCfnEIP(stack, jsii.String(fmt.Sprintf("EgressIp%d", i+1)), &awsec2.CfnEIPProps{
			Domain: jsii.String("vpc"),
			Tags:   &[]*awscdk.CfnTag{{Key: jsii.String("Name"), Value: jsii.String(fmt.Sprintf("%s egress %d", *stack.StackName(), i+1))}},
		})
		allocations[i] = ips[i].AttrAllocationId()
		refs[i] = ips[i].Ref() // an EIP's Ref is its address
	}
	vpc := awsec2.NewVpc(stack, jsii.String("EgressVpc"), &awsec2.VpcProps{
		IpAddresses:        awsec2.IpAddresses_Cidr(jsii.String(EgressVPCCIDR)),
		AvailabilityZones:  &azs,
		NatGateways:        jsii.Number(float64(n)),
		NatGatewayProvider: awsec2.NatProvider_Gateway(&awsec2.NatGatewayProps{EipAllocationIds: &allocations}),
		SubnetConfiguration: &[]*awsec2.SubnetConfiguration{
			// Only the NAT gateways live here; nothing gets a public IP by itself.
			{Name: jsii.String("nat"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(24), MapPublicIpOnLaunch: jsii.Bool(false)},
			{Name: jsii.String("deliver"), SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS, CidrMask: jsii.Number(20)},
		},
		// The default security group is unused (deliver has its own); CDK's
		// way of emptying it is a custom-resource Lambda function.
		RestrictDefaultSecurityGroup: jsii.Bool(false),
		GatewayEndpoints: &map[string]*awsec2.GatewayVpcEndpointOptions{
			"DynamoDb": {Service: awsec2.GatewayVpcEndpointAwsService_DYNAMODB()},
		},
	})
	sg := awsec2.NewSecurityGroup(stack, jsii.String("DeliverSecurityGroup"), &awsec2.SecurityGroupProps{
		Vpc:              vpc,
		Description:      jsii.String("deliver: no inbound; outbound TCP to receivers (any port) and AWS APIs"),
		AllowAllOutbound: jsii.Bool(false),
	})
	sg.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_AllTcp(), jsii.String("Webhook receivers on any port; AWS APIs on 443"), nil)

	// deliver into the private subnets. newFunction builds every function
	// the same way; the VPC settings are added to deliver's resource here.
	deliver := s.Functions[FnDeliver]
	subnets := vpc.SelectSubnets(&awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS})
	deliver.Node().DefaultChild().(awslambda.CfnFunction).SetVpcConfig(&awslambda.CfnFunction_VpcConfigProperty{
		SubnetIds:        subnets.SubnetIds,
		SecurityGroupIds: &[]*string{sg.SecurityGroupId()},
	})
	// Created only once its subnets route to the NAT gateways.
	deliver.Node().AddDependency(subnets.InternetConnectivityEstablished)
	// Lambda manages the function's network interfaces with its role. These
	// EC2 actions take no resource-level restriction that Lambda documents
	// (DescribeNetworkInterfaces needs "*"): the actions of the AWS-managed
	// AWSLambdaVPCAccessExecutionRole without its logs:* (granted already).
	s.Roles[FnDeliver].AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("DeliverVpcNetworkInterfaces"),
		Actions:   jsii.Strings(VPCNetworkInterfaceActions...),
		Resources: jsii.Strings("*"),
	}))

	list := awscdk.Fn_Join(jsii.String(","), &refs)
	s.Functions[FnAPI].AddEnvironment(jsii.String("EGRESS_IPS"), list, nil)
	awscdk.NewCfnOutput(stack, jsii.String("EgressIps"), &awscdk.CfnOutputProps{
		Value:       list,
		Description: jsii.String("Static IPs every webhook is sent from (comma separated): receivers allowlist these"),
	})
	cdknag.NagSuppressions_AddResourceSuppressions(vpc, packs(egressNagSuppressions), jsii.Bool(true))
	return &Egress{VPC: vpc, IPs: ips, SecurityGroup: sg, IPList: list}
}

// VPCNetworkInterfaceActions are what Lambda needs of a VPC function's role.
var VPCNetworkInterfaceActions = []string{
	"ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets",
	"ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses",
}
