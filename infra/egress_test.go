package main

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gifq/webhooks/shared/config"
)

// A stack with static egress IPs in three AZs (the default is two).
func init() {
	variants["egress"] = map[string]any{CtxStage: "egress", CtxEgressStaticIPs: "true", CtxEgressAZs: "3"}
}

var egressTypes = []string{"AWS::EC2::VPC", "AWS::EC2::NatGateway", "AWS::EC2::EIP", "AWS::EC2::Subnet",
	"AWS::EC2::InternetGateway", "AWS::EC2::VPCEndpoint", "AWS::EC2::SecurityGroup"}

// TestEgressOffByDefault: without the option the stack is as before: no
// network resources, no function in a VPC, no EGRESS_IPS, no output.
func TestEgressOffByDefault(t *testing.T) {
	if c := DefaultConfig(); c.EgressStaticIPs || c.EgressAZs != 2 {
		t.Errorf("defaults: egressStaticIps %v egressAzs %d, want false / 2", c.EgressStaticIPs, c.EgressAZs)
	}
	for _, v := range []string{"dev", "prod", "localstack"} {
		s := synth(t, v)
		if s.stack.Egress != nil {
			t.Errorf("%s: Egress is set", v)
		}
		for _, typ := range egressTypes {
			if n := len(s.resources(typ)); n != 0 {
				t.Errorf("%s: %d %s, want none", v, n, typ)
			}
		}
		for _, fn := range Functions {
			_, f := s.functionByName(t, fn)
			if props(f)["VpcConfig"] != nil {
				t.Errorf("%s %s: VpcConfig %v", v, fn, props(f)["VpcConfig"])
			}
			if _, ok := props(f)["Environment"].(map[string]any)["Variables"].(map[string]any)["EGRESS_IPS"]; ok {
				t.Errorf("%s %s: EGRESS_IPS is set", v, fn)
			}
		}
		if _, ok := s.json["Outputs"].(map[string]any)["EgressIps"]; ok {
			t.Errorf("%s: EgressIps output without the option", v)
		}
	}
}

// TestEgressStaticIPs: with the option, deliver runs in private subnets
// whose only way out is a NAT gateway with an Elastic IP in the same AZ, one
// per AZ; the addresses are an output and the api function's EGRESS_IPS.
func TestEgressStaticIPs(t *testing.T) {
	s := synth(t, "egress")
	const azs = 3
	eips := s.resources("AWS::EC2::EIP")
	nats := s.resources("AWS::EC2::NatGateway")
	if len(eips) != azs || len(nats) != azs || len(s.resources("AWS::EC2::VPC")) != 1 {
		t.Fatalf("%d EIPs, %d NAT gateways, %d VPCs; want %d, %d, 1", len(eips), len(nats), len(s.resources("AWS::EC2::VPC")), azs, azs)
	}
	var eipIDs []string
	for id, r := range eips {
		if props(r)["Domain"] != "vpc" {
			t.Errorf("EIP %s: domain %v", id, props(r)["Domain"])
		}
		eipIDs = append(eipIDs, id)
	}
	sort.Strings(eipIDs)
	for i, id := range eipIDs {
		if want := fmt.Sprintf("EgressIp%d", i+1); id != want {
			t.Errorf("EIP logical ids %v: want EgressIp1..%d (stable, so that adding an AZ keeps the IPs)", eipIDs, azs)
			break
		}
	}

	// Subnets: each AZ i is Fn::Select i of Fn::GetAZs (decided at deploy).
	subnets := s.resources("AWS::EC2::Subnet")
	public, private := map[string]string{}, map[string]string{} // subnet id -> AZ
	for id, r := range subnets {
		az := render(props(r)["AvailabilityZone"])
		if props(r)["MapPublicIpOnLaunch"] == true {
			t.Errorf("subnet %s maps public IPs on launch", id)
		}
		if strings.Contains(id, "nat") {
			public[id] = az
		} else {
			private[id] = az
		}
	}
	if len(public) != azs || len(private) != azs {
		t.Fatalf("public subnets %v, private %v: want %d each", public, private, azs)
	}
	seen := map[string]bool{}
	for _, az := range private {
		seen[az] = true
	}
	for i := range azs {
		want := fmt.Sprintf(`{"Fn::Select":[%d,{"Fn::GetAZs":""}]}`, i)
		if !seen[want] {
			t.Errorf("no private subnet in AZ %s (have %v)", want, private)
		}
	}

	// Each NAT gateway: in a public subnet, with its own EIP.
	natAZ := map[string]string{} // NAT id -> AZ
	usedEIP := map[string]bool{}
	for id, r := range nats {
		subnet := strings.Trim(render(props(r)["SubnetId"]), "${}")
		az, ok := public[subnet]
		if !ok {
			t.Errorf("NAT %s is in %s, not a public subnet", id, subnet)
		}
		natAZ[id] = az
		eip := strings.TrimSuffix(strings.Trim(render(props(r)["AllocationId"]), "${}"), ".AllocationId")
		if _, ok := eips[eip]; !ok || usedEIP[eip] {
			t.Errorf("NAT %s: allocation %v is not an EIP of its own", id, props(r)["AllocationId"])
		}
		usedEIP[eip] = true
	}

	// Each private subnet's default route goes to the NAT gateway of its AZ.
	routeTableOf := map[string]string{} // subnet -> route table
	for _, r := range s.resources("AWS::EC2::SubnetRouteTableAssociation") {
		routeTableOf[strings.Trim(render(props(r)["SubnetId"]), "${}")] = strings.Trim(render(props(r)["RouteTableId"]), "${}")
	}
	var privateTables []string
	for subnet, az := range private {
		rt := routeTableOf[subnet]
		privateTables = append(privateTables, rt)
		found := false
		for _, r := range s.resources("AWS::EC2::Route") {
			p := props(r)
			if strings.Trim(render(p["RouteTableId"]), "${}") != rt || p["DestinationCidrBlock"] != "0.0.0.0/0" {
				continue
			}
			nat := strings.Trim(render(p["NatGatewayId"]), "${}")
			if natAZ[nat] != az {
				t.Errorf("private subnet %s (%s) routes 0.0.0.0/0 to %v, not its AZ's NAT gateway", subnet, az, p)
			}
			found = true
		}
		if !found {
			t.Errorf("private subnet %s has no default route", subnet)
		}
	}

	// DynamoDB through a gateway endpoint on the private route tables; no
	// interface endpoints (SQS goes through NAT: see egress.go).
	endpoints := s.resources("AWS::EC2::VPCEndpoint")
	if len(endpoints) != 1 {
		t.Fatalf("%d VPC endpoints, want 1 (DynamoDB)", len(endpoints))
	}
	for id, r := range endpoints {
		p := props(r)
		if !strings.Contains(render(p["ServiceName"]), ".dynamodb") || p["VpcEndpointType"] != "Gateway" {
			t.Errorf("endpoint %s: %v %v, want the DynamoDB gateway endpoint", id, render(p["ServiceName"]), p["VpcEndpointType"])
		}
		var tables []string
		for _, rt := range list(p["RouteTableIds"]) {
			tables = append(tables, strings.Trim(render(rt), "${}"))
		}
		for _, rt := range privateTables {
			if !slices.Contains(tables, rt) {
				t.Errorf("DynamoDB endpoint is not on private route table %s (has %v)", rt, tables)
			}
		}
	}

	// deliver in the private subnets with its security group; nothing else in a VPC.
	sgID, sg := s.only(t, "AWS::EC2::SecurityGroup")
	if props(sg)["SecurityGroupIngress"] != nil {
		t.Errorf("deliver's security group has inbound rules: %v", props(sg)["SecurityGroupIngress"])
	}
	for _, fn := range Functions {
		_, f := s.functionByName(t, fn)
		vc, _ := props(f)["VpcConfig"].(map[string]any)
		if fn != FnDeliver {
			if vc != nil {
				t.Errorf("%s is in the VPC", fn)
			}
			continue
		}
		var got []string
		for _, id := range list(vc["SubnetIds"]) {
			got = append(got, strings.Trim(render(id), "${}"))
		}
		sort.Strings(got)
		want := sortedKeys(private)
		if !slices.Equal(got, want) {
			t.Errorf("deliver subnets %v, want the private ones %v", got, want)
		}
		if sgs := list(vc["SecurityGroupIds"]); len(sgs) != 1 || render(sgs[0]) != "${"+sgID+".GroupId}" {
			t.Errorf("deliver security groups %v, want %s", sgs, sgID)
		}
		// Created only once its subnets can reach the NAT gateways.
		deps := list(f["DependsOn"])
		for _, rt := range privateTables {
			for id, r := range s.resources("AWS::EC2::Route") {
				if strings.Trim(render(props(r)["RouteTableId"]), "${}") == rt && !slices.Contains(deps, any(id)) {
					t.Errorf("deliver does not depend on route %s (DependsOn %v)", id, deps)
				}
			}
		}
	}
	// Its role may manage the function's network interfaces, nothing more on "*".
	_, deliver := s.functionByName(t, FnDeliver)
	role := strings.TrimSuffix(strings.Trim(render(props(deliver)["Role"]), "${}"), ".Arn")
	var eniStatements int
	for _, st := range s.statements() {
		if !slices.Contains(st.Resources, "*") {
			continue
		}
		if sameSet(st.Actions, VPCNetworkInterfaceActions) {
			eniStatements++
			if !slices.Equal(st.Roles, []string{role}) {
				t.Errorf("network interface actions granted to %v, want only deliver's role %s", st.Roles, role)
			}
			continue
		}
		for _, a := range st.Actions {
			if _, ok := wildcardResourceActions[a]; !ok {
				t.Errorf("%s: %s on Resource \"*\"", st.Policy, a)
			}
		}
	}
	if eniStatements != 1 {
		t.Errorf("%d statements with the network interface actions, want 1", eniStatements)
	}

	// The addresses: the api function's EGRESS_IPS and the EgressIps output,
	// both the EIPs' refs joined with commas.
	var refs []string
	for _, id := range eipIDs {
		refs = append(refs, "${"+id+"}")
	}
	want := strings.Join(refs, ",")
	_, api := s.functionByName(t, FnAPI)
	if got := render(props(api)["Environment"].(map[string]any)["Variables"].(map[string]any)["EGRESS_IPS"]); got != want {
		t.Errorf("api EGRESS_IPS = %s, want %s", got, want)
	}
	out, _ := s.json["Outputs"].(map[string]any)["EgressIps"].(map[string]any)
	if got := render(out["Value"]); got != want {
		t.Errorf("EgressIps output = %s, want %s", got, want)
	}
	// Resolved at deploy to addresses, it is what shared/config reads.
	var i int
	resolved := regexp.MustCompile(`\$\{EgressIp\d+\}`).ReplaceAllStringFunc(want, func(string) string { i++; return fmt.Sprintf("203.0.113.%d", i) })
	apiEnv := map[string]string{}
	for k, v := range props(api)["Environment"].(map[string]any)["Variables"].(map[string]any) {
		apiEnv[k] = render(v)
	}
	apiEnv["EGRESS_IPS"] = resolved
	apiEnv["DEPLOYMENT_ACCOUNT_ID"] = "123456789012"
	if c, err := config.Parse(func(k string) string { return apiEnv[k] }); err != nil || len(c.EgressIPs) != azs {
		t.Errorf("the api's environment with EGRESS_IPS=%s: %v, egress IPs %v", resolved, err, c.EgressIPs)
	}
	for _, fn := range []string{FnDeliver, FnSweeper, FnRedrive} {
		_, f := s.functionByName(t, fn)
		if _, ok := props(f)["Environment"].(map[string]any)["Variables"].(map[string]any)["EGRESS_IPS"]; ok {
			t.Errorf("%s has EGRESS_IPS; only the api shows them", fn)
		}
	}

	// cdk-nag has nothing left to say (the flow-log decision is suppressed with its reason).
	for _, e := range append(append([]string{}, s.errors...), s.warnings...) {
		t.Errorf("nag: %s", e)
	}
}

// TestEgressAZCount: the AZ count sets the number of NAT gateways and IPs,
// and is validated.
func TestEgressAZCount(t *testing.T) {
	// Each AZ takes an Elastic IP; a region's default quota is 5.
	for _, bad := range []string{"0", "6", "two"} {
		if _, err := ParseConfig(getter(map[string]any{CtxEgressStaticIPs: "true", CtxEgressAZs: bad})); err == nil || !strings.Contains(err.Error(), CtxEgressAZs) {
			t.Errorf("egressAzs=%s: error %v", bad, err)
		}
	}
	if _, err := ParseConfig(getter(map[string]any{CtxEgressStaticIPs: "maybe"})); err == nil || !strings.Contains(err.Error(), CtxEgressStaticIPs) {
		t.Errorf("egressStaticIps=maybe: error %v", err)
	}
	c, err := ParseConfig(getter(map[string]any{CtxEgressStaticIPs: "true"}))
	if err != nil || !c.EgressStaticIPs || c.EgressAZs != 2 {
		t.Errorf("egressStaticIps=true: %+v %v, want on with 2 AZs", c, err)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(a, b)
}
