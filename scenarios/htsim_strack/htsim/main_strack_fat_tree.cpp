// STrack on htsim's k = 8 fat-tree, written for incast's comparison (issue 48), modelled on
// csg-htsim 841d9e7 sim/datacenter/main_swift.cpp: the same topology, matrix loading, random
// path per flow (srand(13)), FairScheduler host queues; STrackSrc/STrackSink instead of Swift's.
// -seed S (default 13, main_swift's) seeds glibc's one rand()/random() stream, which draws every
// flow's path here and RandomQueue's drops (10 % of arrivals within RANDOM_BUFFER packets of full).
// STrack prints nothing when a flow ends: FinishSink records the time its in-order bytes reach
// the flow's size (-flowsize packets plus the one STrackSrc::set_flowsize adds).
#include "config.h"
#include <sstream>
#include <iostream>
#include <string.h>
#include <math.h>
#include "network.h"
#include "pipe.h"
#include "eventlist.h"
#include "logfile.h"
#include "loggers.h"
#include "clock.h"
#include "strack.h"
#include "connection_matrix.h"
#include "fat_tree_topology.h"
#include "main.h"

EventList eventlist;

class FinishSink : public STrackSink {
public:
    FinishSink(string name, uint64_t bytes) : _name(name), _bytes(bytes), _done(false) {}
    void receivePacket(Packet& pkt) override {
        STrackSink::receivePacket(pkt);
        if (!_done && total_received() >= _bytes) {
            _done = true;
            cout << "Flow " << _name << " finished at " << timeAsUs(eventlist.now()) << endl;
        }
    }
private:
    string _name;
    uint64_t _bytes;
    bool _done;
};

int main(int argc, char** argv) {
    uint32_t cwnd = 15, no_of_nodes = 128, flowsize = 500, seed = 13;
    mem_b queuesize = 1000;
    simtime_picosec endtime = timeFromMs(1.2);
    simtime_picosec base_rtt = timeFromUs((uint32_t)12);
    char* tm_file = NULL;
    string logname = "logout.dat";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o")) logname = argv[++i];
        else if (!strcmp(argv[i], "-nodes")) no_of_nodes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-tm")) tm_file = argv[++i];
        else if (!strcmp(argv[i], "-cwnd")) cwnd = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-flowsize")) flowsize = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-end")) endtime = timeFromUs(atof(argv[++i]));
        else if (!strcmp(argv[i], "-q")) queuesize = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-basertt")) base_rtt = timeFromUs(atof(argv[++i]));
        else if (!strcmp(argv[i], "-seed")) seed = atoi(argv[++i]);
        else { cout << "unknown argument " << argv[i] << endl; exit(1); }
    }
    Packet::set_packet_size(4000);
    eventlist.setEndtime(endtime);
    queuesize = queuesize * Packet::data_packet_size();
    srand(seed);  // glibc: rand(), random() and drand() share this one stream
    Logfile logfile(logname, eventlist);
    logfile.setStartTime(timeFromSec(0));
    STrackRtxTimerScanner rtx_scanner(timeFromMs(10), eventlist);
    FatTreeTopology* top = new FatTreeTopology(no_of_nodes, speedFromMbps((double)HOST_NIC),
                                               queuesize, NULL, &eventlist, NULL, RANDOM,
                                               SWIFT_SCHEDULER, 0);
    no_of_nodes = top->no_of_nodes();
    ConnectionMatrix* conns = new ConnectionMatrix(no_of_nodes);
    if (!tm_file || !conns->load(tm_file)) { cout << "need -tm MATRIX" << endl; exit(1); }
    vector<connection*>* all = conns->getAllConnections();
    for (uint32_t c = 0; c < all->size(); c++) {
        connection* crt = all->at(c);
        uint32_t src = crt->src, dest = crt->dst;
        vector<const Route*>* paths = top->get_paths(src, dest);
        STrackSrc* strack = new STrackSrc(rtx_scanner, NULL, NULL, eventlist);
        strack->set_cwnd(cwnd * Packet::data_packet_size());
        strack->set_base_rtt(base_rtt);
        strack->set_flowsize((uint64_t)flowsize * Packet::data_packet_size());
        string name = "strack_" + ntoa(src) + "_" + ntoa(dest);
        strack->setName(name);
        FinishSink* sink = new FinishSink(name, (uint64_t)(flowsize + 1) * Packet::data_packet_size());
        uint32_t choice = rand() % paths->size();   // as main_swift's FAT_TREE branch
        Route* out = new Route(*paths->at(choice));
        Route* back = new Route(*top->get_paths(dest, src)->at(choice));
        strack->connect(*out, *back, *sink, timeFromUs((uint32_t)crt->start));
    }
    while (eventlist.doNextEvent()) {}
    cout << "Done" << endl;
}
