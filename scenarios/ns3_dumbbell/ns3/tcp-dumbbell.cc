// Issue 43's dumbbell in ns-3 mainline, written for the incast project (docs/ns3-tcp.md).
//
// N senders -> one router -> one receiver over point-to-point links (1 us each). The router's
// port toward the receiver is the bottleneck: 10 Gb/s with a 1 MB drop-tail queue, the only
// queue that can fill. TCP: TcpCubic or TcpBbr, MSS 1460 (1500-byte IP packets, no TCP
// options on data segments: timestamps off), initial window 10, minimum RTO 10 ms, an ACK per
// segment, SACK with PRR or no SACK with ns-3's classic recovery, Limited Transmit off.
//
// Two modes:
//   long-lived (default): one unlimited flow per sender from t = 0 to --stop; per-flow goodput
//     (payload bytes cumulatively acknowledged), retransmitted segments and timeouts, and the
//     bottleneck's drops, busy time and queue mean (sampled every --sample) over
//     [--from, --stop).
//   --flows=FILE: the flows of FILE (CSV `src,dst,size_bytes,start_ns,class`, senders named s<i>,
//     the receiver r, the flow list incast reads as `workload.flow_file`). Every flow gets its own
//     connection, opened at t = 0 so that no handshake falls inside a flow's completion time
//     (incast models none); its bytes are written to the socket at start_ns. FCT = the time its
//     last byte is cumulatively acknowledged - start_ns.
//
// Build: copy into ns-3's scratch/ and `./ns3 build scratch/tcp-dumbbell`.
// Run:   ./ns3 run "tcp-dumbbell --tcp=TcpCubic --senderRate=40Gbps --sack=1" > out.csv
//
// Queues: Ipv4AddressHelper::Assign installs a pfifo_fast queue disc (1000 packets) on every
// device; this program removes them all, so the device queues are the only queues. The
// bottleneck device's DropTailQueue holds 1 MB (bytes mode; ns-3 counts the 2-byte PPP header
// of each queued packet, so 1502 bytes per full segment); every other device queue holds
// 100 000 packets, so nothing else drops (incast's hosts and the other switch ports do not).
// A device queue that cannot take another MTU-sized packet stops its NetDeviceQueue, and the
// traffic-control layer then drops the packets it is handed (its "TcDrop" trace): the drops
// of the 1 MB drop-tail are counted there and at the queue itself.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

using namespace ns3;

namespace
{

const uint16_t kPort = 5000;
const uint32_t kMss = 1460;
// Bytes handed to a socket per Send() for a long-lived flow.
const uint32_t kChunk = 64 * kMss;

/// One TCP connection from a sender to the receiver and what it did.
struct Flow
{
    uint32_t sender = 0;
    uint64_t size = 0; // 0: long-lived (unlimited until the run ends)
    Time start;
    Ptr<TcpSocketBase> socket;
    uint64_t written = 0; // bytes handed to the socket so far
    bool open = false;    // data may be written (start time reached)
    uint32_t retransmits = 0;
    uint32_t timeouts = 0;
    uint64_t ackedAtFrom = 0; // cumulative ACK at the window's start
    uint32_t retransmitsAtFrom = 0;
    uint32_t timeoutsAtFrom = 0;
    bool finished = false;
    Time finish;
};

std::vector<Flow> g_flows;
uint64_t g_bottleneckDrops = 0;
uint64_t g_bottleneckDropsAtFrom = 0;
uint64_t g_otherDrops = 0;
uint64_t g_bottleneckTxBytes = 0;
uint64_t g_bottleneckTxBytesAtFrom = 0;
double g_queueSum = 0;
uint64_t g_queueSamples = 0;
Ptr<Queue<Packet>> g_bottleneckQueue;
std::ofstream g_cwndTrace; // --cwndTrace: `time_ns,flow,what,value` lines

/// Payload bytes of flow `i` cumulatively acknowledged (the SYN takes sequence number 0).
uint64_t
Acked(const Flow& flow)
{
    if (!flow.socket || !flow.socket->GetTxBuffer())
    {
        return 0;
    }
    uint32_t head = flow.socket->GetTxBuffer()->HeadSequence().GetValue();
    return head > 0 ? head - 1 : 0;
}

/// Keeps the socket's send buffer full (long-lived) or writes what is left of the flow.
void
Pump(uint32_t i)
{
    Flow& flow = g_flows[i];
    if (!flow.open)
    {
        return;
    }
    while (flow.size == 0 || flow.written < flow.size)
    {
        uint32_t room = flow.socket->GetTxAvailable();
        uint64_t left = flow.size == 0 ? kChunk : flow.size - flow.written;
        uint32_t n = static_cast<uint32_t>(std::min<uint64_t>({room, left, kChunk}));
        if (n == 0)
        {
            return;
        }
        int sent = flow.socket->Send(Create<Packet>(n), 0);
        if (sent <= 0)
        {
            return;
        }
        flow.written += static_cast<uint64_t>(sent);
    }
}

void
OnSendSpace(uint32_t i, Ptr<Socket>, uint32_t)
{
    Pump(i);
}

void
OnConnected(uint32_t i, Ptr<Socket>)
{
    Pump(i);
}

void
OnConnectFailed(uint32_t i, Ptr<Socket>)
{
    std::cerr << "tcp-dumbbell: flow " << i << " could not connect" << std::endl;
    std::exit(1);
}

void
OpenFlow(uint32_t i)
{
    g_flows[i].open = true;
    Pump(i);
}

void
OnRetransmission(uint32_t i,
                 Ptr<const Packet>,
                 const TcpHeader&,
                 const Address&,
                 const Address&,
                 Ptr<const TcpSocketBase>)
{
    g_flows[i].retransmits++;
}

/// TcpSocketBase::ReTxTimeout doubles the RTO (capped at 60 s) on every timeout, and only
/// there; an RTT sample sets it to max(MinRto, SRTT + 4 RTTVAR), never to exactly twice it.
void
OnRto(uint32_t i, Time before, Time after)
{
    if (before.IsStrictlyPositive() && after == Min(before + before, Seconds(60)) && after > before)
    {
        g_flows[i].timeouts++;
    }
}

void
OnHighestRxAck(uint32_t i, SequenceNumber32, SequenceNumber32 ack)
{
    Flow& flow = g_flows[i];
    if (flow.size > 0 && !flow.finished && ack.GetValue() >= flow.size + 1)
    {
        flow.finished = true;
        flow.finish = Simulator::Now();
    }
}

/// --cwndTrace: one line per change of a flow's cwnd or ssthresh (bytes) or congestion state.
void
TraceValue(uint32_t i, const char* what, uint32_t, uint32_t value)
{
    g_cwndTrace << Simulator::Now().GetNanoSeconds() << "," << i << "," << what << "," << value
                << "\n";
}

void
OnCwnd(uint32_t i, uint32_t before, uint32_t after)
{
    TraceValue(i, "cwnd", before, after);
}

void
OnSsthresh(uint32_t i, uint32_t before, uint32_t after)
{
    TraceValue(i, "ssthresh", before, after);
}

void
OnCongState(uint32_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t after)
{
    TraceValue(i, "state", 0, static_cast<uint32_t>(after));
}

void
OnBottleneckDrop(Ptr<const Packet>)
{
    g_bottleneckDrops++;
}

void
OnOtherDrop(Ptr<const Packet>)
{
    g_otherDrops++;
}

void
OnBottleneckTxEnd(Ptr<const Packet> packet)
{
    g_bottleneckTxBytes += packet->GetSize();
}

void
SampleQueue(Time every, Time until)
{
    g_queueSum += g_bottleneckQueue->GetNBytes();
    g_queueSamples++;
    if (Simulator::Now() + every < until)
    {
        Simulator::Schedule(every, &SampleQueue, every, until);
    }
}

/// Snapshot at the start of the measurement window.
void
MarkWindowStart()
{
    for (auto& flow : g_flows)
    {
        flow.ackedAtFrom = Acked(flow);
        flow.retransmitsAtFrom = flow.retransmits;
        flow.timeoutsAtFrom = flow.timeouts;
    }
    g_bottleneckDropsAtFrom = g_bottleneckDrops;
    g_bottleneckTxBytesAtFrom = g_bottleneckTxBytes;
}

/// Reads `src,dst,size_bytes,start_ns,class` rows (senders `s<i>`, receiver `r`).
void
ReadFlows(const std::string& path, uint32_t senders)
{
    std::ifstream in(path);
    if (!in)
    {
        std::cerr << "tcp-dumbbell: cannot open --flows=" << path << std::endl;
        std::exit(1);
    }
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line))
    {
        if (line.empty())
        {
            continue;
        }
        std::stringstream row(line);
        std::string src;
        std::string dst;
        std::string size;
        std::string start;
        std::getline(row, src, ',');
        std::getline(row, dst, ',');
        std::getline(row, size, ',');
        std::getline(row, start, ',');
        uint32_t sender = static_cast<uint32_t>(std::stoul(src.substr(1)));
        if (src[0] != 's' || dst != "r" || sender >= senders)
        {
            std::cerr << "tcp-dumbbell: flow `" << line << "` is not s<i> -> r with i < "
                      << senders << std::endl;
            std::exit(1);
        }
        Flow flow;
        flow.sender = sender;
        flow.size = std::stoull(size);
        flow.start = NanoSeconds(std::stoll(start));
        g_flows.push_back(flow);
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string tcp = "TcpCubic";
    std::string senderRate = "10Gbps";
    bool sack = false;
    uint32_t senders = 4;
    std::string flowFile;
    Time stop = MilliSeconds(200);
    Time from = MilliSeconds(100);
    Time sample = MicroSeconds(10);
    bool timestamps = false;
    bool limitedTransmit = false;
    std::string cwndTrace;
    Time delaySkew = Seconds(0);

    CommandLine cmd(__FILE__);
    cmd.AddValue("tcp", "TCP variant: TcpCubic or TcpBbr", tcp);
    cmd.AddValue("senderRate", "rate of the sender links", senderRate);
    cmd.AddValue("sack", "SACK with PRR (1) or no SACK, classic recovery (0)", sack);
    cmd.AddValue("senders", "number of senders", senders);
    cmd.AddValue("flows", "flow list (CSV src,dst,size_bytes,start_ns,class)", flowFile);
    cmd.AddValue("stop", "end of the run", stop);
    cmd.AddValue("from", "start of the measurement window (long-lived mode)", from);
    cmd.AddValue("sample", "bottleneck queue sampling interval", sample);
    cmd.AddValue("timestamps", "TCP timestamps (MSS 1448 then, for 1500-byte packets)", timestamps);
    cmd.AddValue("limitedTransmit", "RFC 3042 Limited Transmit (ns-3's default: on)", limitedTransmit);
    cmd.AddValue("cwndTrace",
                 "write every cwnd, ssthresh and congestion-state change to this file",
                 cwndTrace);
    cmd.AddValue("delaySkew",
                 "sender i's link delay is 1 us + i x this (phase effects; default 0)",
                 delaySkew);
    cmd.Parse(argc, argv);
    if (tcp != "TcpCubic" && tcp != "TcpBbr")
    {
        std::cerr << "tcp-dumbbell: --tcp must be TcpCubic or TcpBbr, not " << tcp << std::endl;
        return 1;
    }

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName("ns3::" + tcp)));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(sack ? TcpPrrRecovery::GetTypeId()
                                        : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(10)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(timestamps ? kMss - 12 : kMss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1u << 26));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1u << 26));
    // incast's CUBIC runs without HyStart by default; ns-3's default is HyStart on.
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));
    // ns-3 caps pacing at 4 Gb/s by default; incast's BBR has no cap.
    Config::SetDefault("ns3::TcpSocketState::MaxPacingRate", DataRateValue(DataRate("100Gbps")));

    if (!flowFile.empty())
    {
        ReadFlows(flowFile, senders);
    }
    else
    {
        for (uint32_t s = 0; s < senders; ++s)
        {
            Flow flow;
            flow.sender = s;
            g_flows.push_back(flow);
        }
    }

    NodeContainer receiver;
    receiver.Create(1);
    NodeContainer router;
    router.Create(1);
    NodeContainer senderNodes;
    senderNodes.Create(senders);

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    bottleneck.SetChannelAttribute("Delay", StringValue("1us"));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("100000p"));
    NetDeviceContainer bottleneckDevices = bottleneck.Install(router.Get(0), receiver.Get(0));

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(senderRate));
    access.SetChannelAttribute("Delay", StringValue("1us"));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("100000p"));
    std::vector<NetDeviceContainer> accessDevices;
    for (uint32_t s = 0; s < senders; ++s)
    {
        access.SetChannelAttribute("Delay", TimeValue(MicroSeconds(1) + delaySkew * s));
        accessDevices.push_back(access.Install(senderNodes.Get(s), router.Get(0)));
    }

    InternetStackHelper stack;
    stack.InstallAll();
    Ipv4AddressHelper addresses;
    addresses.SetBase("10.0.0.0", "255.255.255.0");
    Ipv4InterfaceContainer bottleneckIfs = addresses.Assign(bottleneckDevices);
    for (auto& devices : accessDevices)
    {
        addresses.NewNetwork();
        addresses.Assign(devices);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // The device queues are the only queues (see the header).
    TrafficControlHelper tch;
    tch.Uninstall(bottleneckDevices);
    for (auto& devices : accessDevices)
    {
        tch.Uninstall(devices);
    }
    auto routerOut = DynamicCast<PointToPointNetDevice>(bottleneckDevices.Get(0));
    g_bottleneckQueue = routerOut->GetQueue();
    g_bottleneckQueue->SetMaxSize(QueueSize("1MB"));
    g_bottleneckQueue->TraceConnectWithoutContext("Drop", MakeCallback(&OnBottleneckDrop));
    routerOut->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnBottleneckTxEnd));
    // A device queue that cannot take another MTU-sized packet stops its NetDeviceQueue, and
    // with no queue disc the traffic-control layer then drops what it is handed ("TcDrop"):
    // that is where the 1 MB drop-tail drops. Only the router's bottleneck device fills.
    router.Get(0)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
        "TcDrop",
        MakeCallback(&OnBottleneckDrop));
    receiver.Get(0)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
        "TcDrop",
        MakeCallback(&OnOtherDrop));
    for (uint32_t s = 0; s < senders; ++s)
    {
        senderNodes.Get(s)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop",
            MakeCallback(&OnOtherDrop));
    }
    DynamicCast<PointToPointNetDevice>(bottleneckDevices.Get(1))
        ->GetQueue()
        ->TraceConnectWithoutContext("Drop", MakeCallback(&OnOtherDrop));
    for (auto& devices : accessDevices)
    {
        for (uint32_t d = 0; d < 2; ++d)
        {
            DynamicCast<PointToPointNetDevice>(devices.Get(d))
                ->GetQueue()
                ->TraceConnectWithoutContext("Drop", MakeCallback(&OnOtherDrop));
        }
    }

    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), kPort));
    ApplicationContainer sinkApp = sink.Install(receiver.Get(0));
    sinkApp.Start(Seconds(0));

    InetSocketAddress remote(bottleneckIfs.GetAddress(1), kPort);
    for (uint32_t i = 0; i < g_flows.size(); ++i)
    {
        Flow& flow = g_flows[i];
        Ptr<Socket> socket =
            Socket::CreateSocket(senderNodes.Get(flow.sender), TcpSocketFactory::GetTypeId());
        flow.socket = DynamicCast<TcpSocketBase>(socket);
        socket->Bind();
        socket->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&OnRetransmission, i));
        socket->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, i));
        socket->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&OnHighestRxAck, i));
        if (!cwndTrace.empty())
        {
            socket->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, i));
            socket->TraceConnectWithoutContext("SlowStartThreshold",
                                               MakeBoundCallback(&OnSsthresh, i));
            socket->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, i));
        }
        socket->SetConnectCallback(MakeBoundCallback(&OnConnected, i),
                                   MakeBoundCallback(&OnConnectFailed, i));
        socket->SetSendCallback(MakeBoundCallback(&OnSendSpace, i));
        socket->Connect(remote);
        Simulator::Schedule(flow.start, &OpenFlow, i);
    }

    if (flowFile.empty())
    {
        Simulator::Schedule(from, &MarkWindowStart);
        Simulator::Schedule(from, &SampleQueue, sample, stop);
    }
    if (!cwndTrace.empty())
    {
        g_cwndTrace.open(cwndTrace);
        g_cwndTrace << "time_ns,flow,what,value\n";
    }
    Simulator::Stop(stop);
    Simulator::Run();

    std::cout.precision(10);
    if (flowFile.empty())
    {
        double seconds = (stop - from).GetSeconds();
        std::cout << "flow,goodput_gbps,retransmits,timeouts\n";
        for (uint32_t i = 0; i < g_flows.size(); ++i)
        {
            const Flow& flow = g_flows[i];
            double gbps = (Acked(flow) - flow.ackedAtFrom) * 8.0 / seconds / 1e9;
            std::cout << i << "," << gbps << "," << flow.retransmits - flow.retransmitsAtFrom
                      << "," << flow.timeouts - flow.timeoutsAtFrom << "\n";
        }
        double busy = (g_bottleneckTxBytes - g_bottleneckTxBytesAtFrom) * 8.0 / 10e9 / seconds;
        std::cout << "# utilization," << busy << "\n";
        std::cout << "# queue_mean_bytes," << g_queueSum / g_queueSamples << "\n";
        std::cout << "# drops," << g_bottleneckDrops - g_bottleneckDropsAtFrom << "\n";
    }
    else
    {
        std::cout << "flow,src,size_bytes,start_ns,fct_ns,retransmits,timeouts\n";
        for (uint32_t i = 0; i < g_flows.size(); ++i)
        {
            const Flow& flow = g_flows[i];
            std::cout << i << ",s" << flow.sender << "," << flow.size << ","
                      << flow.start.GetNanoSeconds() << ",";
            if (flow.finished)
            {
                std::cout << (flow.finish - flow.start).GetNanoSeconds();
            }
            std::cout << "," << flow.retransmits << "," << flow.timeouts << "\n";
        }
        std::cout << "# drops," << g_bottleneckDrops << "\n";
    }
    std::cout << "# other_drops," << g_otherDrops << "\n";
    Simulator::Destroy();
    return 0;
}
