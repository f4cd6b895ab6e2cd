//! Writing a [`Case`] as scenario TOML.

use super::case::*;
use incast_core::topology::Graph;
use std::fmt::Write;

/// Host `raw` fitted to `n` hosts.
fn pick(raw: u32, n: u32) -> u32 {
    raw % n
}

/// A destination other than `src`.
fn pick_other(src: u32, raw: u32, n: u32) -> u32 {
    (src + 1 + raw % (n - 1)) % n
}

/// The hosts whose bit is set in `mask` (bit i % 32 for host i), at least two.
pub fn subset(mask: u32, n: u32) -> Vec<u32> {
    let mut out: Vec<u32> = (0..n).filter(|h| mask & (1 << (h % 32)) != 0).collect();
    for h in 0..n {
        if out.len() >= 2 {
            break;
        }
        if !out.contains(&h) {
            out.push(h);
        }
    }
    out.sort_unstable();
    out
}

fn list(v: &[u32]) -> String {
    let items: Vec<String> = v.iter().map(u32::to_string).collect();
    format!("[{}]", items.join(", "))
}

fn ecn_toml(e: &Ecn) -> String {
    let at = |d: bool| if d { "dequeue" } else { "enqueue" };
    match e {
        Ecn::Off => r#"{ kind = "off" }"#.into(),
        Ecn::Step { k, dequeue } => {
            format!(r#"{{ kind = "step", k = {k}, at = "{}" }}"#, at(*dequeue))
        }
        Ecn::Red {
            kmin,
            kmax,
            pmax,
            dequeue,
        } => format!(
            r#"{{ kind = "red", kmin = {kmin}, kmax = {}, pmax = {pmax}, at = "{}" }}"#,
            kmin + kmax,
            at(*dequeue)
        ),
        Ecn::RedByRate { dequeue } => format!(
            r#"{{ kind = "red_by_rate", at = "{}", levels = [{{ rate = "10Gbps", kmin = "10KB", kmax = "50KB", pmax = 0.2 }}, {{ rate = "100Gbps", kmin = "100KB", kmax = "400KB", pmax = 0.2 }}] }}"#,
            at(*dequeue)
        ),
    }
}

fn admission_toml(a: &Admission) -> String {
    match a {
        Admission::Dynamic(alpha) => format!(r#"{{ kind = "dynamic", alpha = {alpha} }}"#),
        Admission::Static(limit) => format!(r#"{{ kind = "static", limit = {limit} }}"#),
    }
}

impl Topo {
    pub fn toml(&self) -> String {
        match self {
            Topo::Single {
                hosts,
                rate,
                delay_ns,
            } => format!(
                "kind = \"single_switch\"\nhosts = {hosts}\nlink_rate = \"{rate}Gbps\"\nlink_delay = \"{delay_ns}ns\"\n"
            ),
            Topo::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
                host_rate,
                fabric_rate,
                host_delay_ns,
                fabric_delay_ns,
                links_per_spine,
            } => format!(
                "kind = \"leaf_spine\"\nleaves = {leaves}\nspines = {spines}\nhosts_per_leaf = {hosts_per_leaf}\n\
                 host_rate = \"{host_rate}Gbps\"\nfabric_rate = \"{fabric_rate}Gbps\"\nhost_delay = \"{host_delay_ns}ns\"\n\
                 fabric_delay = \"{fabric_delay_ns}ns\"\nlinks_per_spine = {links_per_spine}\n"
            ),
            Topo::FatTree {
                host_rate,
                fabric_rate,
                core_rate,
                delay_ns,
            } => {
                let mut s = format!(
                    "kind = \"fat_tree\"\nk = 4\nhost_rate = \"{host_rate}Gbps\"\nfabric_rate = \"{fabric_rate}Gbps\"\ndelay = \"{delay_ns}ns\"\n"
                );
                if let Some(c) = core_rate {
                    let _ = writeln!(s, "core_rate = \"{c}Gbps\"");
                }
                s
            }
            Topo::Dumbbell {
                left,
                right,
                host_rate,
                middle,
                mid_rate,
                delay_ns,
            } => {
                let n = left + right;
                let hosts: Vec<String> = (0..n).map(|h| format!("\"h{h}\"")).collect();
                let mut switches = vec!["\"s0\"".to_string(), "\"s1\"".to_string()];
                let mut links = vec![];
                for h in 0..n {
                    let sw = if h < *left { "s0" } else { "s1" };
                    links.push(format!(
                        "{{ a = \"h{h}\", b = \"{sw}\", rate = \"{host_rate}Gbps\", delay = \"{delay_ns}ns\" }}"
                    ));
                }
                if middle.is_empty() {
                    links.push(format!(
                        "{{ a = \"s0\", b = \"s1\", rate = \"{mid_rate}Gbps\", delay = \"{delay_ns}ns\" }}"
                    ));
                }
                for (i, r) in middle.iter().enumerate() {
                    switches.push(format!("{{ name = \"m{i}\", tier = 2 }}"));
                    for end in ["s0", "s1"] {
                        links.push(format!(
                            "{{ a = \"{end}\", b = \"m{i}\", rate = \"{r}Gbps\", delay = \"{delay_ns}ns\" }}"
                        ));
                    }
                }
                format!(
                    "kind = \"explicit\"\nhosts = [{}]\nswitches = [{}]\nlinks = [\n    {},\n]\n",
                    hosts.join(", "),
                    switches.join(", "),
                    links.join(",\n    ")
                )
            }
        }
    }
}

impl Case {
    /// The scenario as TOML.
    pub fn toml(&self) -> String {
        let g = self.topo.graph();
        let n = self.n_hosts();
        let mut s = String::new();
        let _ = writeln!(s, "name = \"property\"\nseed = {}", self.seed);
        let _ = writeln!(
            s,
            "duration = \"{}us\"\nstop = \"{}us\"",
            self.duration_us,
            self.duration_us + self.drain_us
        );
        let _ = writeln!(s, "\n[topology]\n{}", self.topo.toml());
        self.switch_toml(&mut s, &g);
        let trim = self.trim_classes();
        if !trim.is_empty() {
            let classes: Vec<u32> = trim.iter().map(|&c| c as u32).collect();
            let _ = writeln!(s, "\n[switch.trim]\nclasses = {}", list(&classes));
        }
        self.transport_toml(&mut s);
        if let Some(e) = &self.edge {
            edge_toml(&mut s, e, n);
        }
        if let Some(m) = &self.metrics {
            let _ = writeln!(
                s,
                "[metrics]\nwarmup = \"{}us\"\nqueue_sample_interval = \"{}us\"\nqueue_ports = \"{}\"\nsize_buckets = [\"10KB\", \"100KB\", \"1MB\"]\n",
                m.warmup_us.min(self.duration_us), m.queue_sample_us, m.queue_ports
            );
        }
        self.workload_toml(&mut s);
        s
    }

    fn switch_toml(&self, s: &mut String, g: &Graph) {
        let sw = &self.switch;
        let _ = writeln!(
            s,
            "[switch]\nbuffer = {}\nadmission = {}\necn = {}",
            self.buffer(g),
            admission_toml(&sw.admission),
            ecn_toml(&sw.ecn)
        );
        let mut classes = vec![];
        if let Some((w0, w1, w3)) = sw.dwrr {
            let _ = writeln!(s, "scheduler = \"dwrr\"");
            classes.push(format!("{{ class = 1, weight = {w1} }}"));
            classes.push(format!("{{ class = 3, weight = {w3} }}"));
            if sw.class0.is_none() {
                classes.push(format!("{{ class = 0, weight = {w0} }}"));
            }
        }
        if let Some((e, a)) = &sw.class0 {
            let w = sw
                .dwrr
                .map_or(String::new(), |d| format!(", weight = {}", d.0));
            classes.push(format!(
                "{{ class = 0, ecn = {}, admission = {}{w} }}",
                ecn_toml(e),
                admission_toml(a)
            ));
        }
        if !classes.is_empty() {
            let _ = writeln!(s, "classes = [\n    {},\n]", classes.join(",\n    "));
        }
        if let Some(p) = &self.pfc {
            let classes: Vec<u32> = self.lossless_classes().iter().map(|&c| c as u32).collect();
            let _ = writeln!(s, "\n[switch.pfc]\nclasses = {}", list(&classes));
            match p.threshold {
                PfcThreshold::Dynamic {
                    alpha,
                    scale_with_rate,
                } => {
                    let _ = writeln!(s, "threshold = {{ kind = \"dynamic\", alpha = {alpha}, scale_with_rate = {scale_with_rate} }}");
                }
                PfcThreshold::Static { xoff } => {
                    let _ = writeln!(s, "threshold = {{ kind = \"static\", xoff = {xoff} }}");
                }
            }
            let _ = writeln!(
                s,
                "reserve = {}\nresume_offset = {}\nresponse_time = \"{}ns\"\npause_quanta = {}\nmode = \"{}\"\nhosts_obey = {}",
                p.reserve,
                p.resume_offset,
                p.response_ns,
                p.pause_quanta,
                if p.until_resume { "until_resume" } else { "quanta" },
                p.hosts_obey
            );
            if let Some(h) = p.headroom {
                let _ = writeln!(s, "headroom = {h}");
            }
            match &p.watchdog {
                None => {}
                Some(Watchdog::Report { limit_us }) => {
                    let _ = writeln!(s, "watchdog = {{ limit = \"{limit_us}us\" }}");
                }
                Some(Watchdog::Drop {
                    limit_us,
                    restore_us,
                }) => {
                    let _ = writeln!(
                        s,
                        "watchdog = {{ limit = \"{limit_us}us\", drop = true, restore = \"{restore_us}us\" }}"
                    );
                }
            }
        }
        if let Some(ci) = &self.ci {
            let cfq: Vec<u32> = self.cfqs().iter().map(|&c| c as u32).collect();
            let detect = match ci.detect {
                Detect::Arriving => r#"{ kind = "arriving" }"#.to_string(),
                Detect::Sampled { every } => format!(r#"{{ kind = "sampled", every = {every} }}"#),
                Detect::Top { k, every } => {
                    format!(r#"{{ kind = "top", k = {k}, every = {every} }}"#)
                }
            };
            let _ = writeln!(
                s,
                "\n[switch.ci]\nqueues = [{{ class = 3, cfq = {} }}]\nthreshold = {}\ndetect = {detect}\norder = \"{}\"\n\
                 age = \"{}us\"\nrelease_on_drain = {}\npropagate = \"{}\"\nnic = {}\nmax_flows = {}\n\
                 cip = {{ reliability = \"{}\", loss = {} }}",
                list(&cfq),
                ci.threshold,
                ci.order,
                ci.age_us,
                ci.release_on_drain,
                if ci.propagate_congested { "congested" } else { "immediate" },
                ci.nic,
                ci.max_flows,
                ci.reliability,
                ci.loss
            );
        }
        s.push('\n');
    }

    fn transport_toml(&self, s: &mut String) {
        match &self.transport {
            Transport::Tcp(t) => {
                let cc = match t.cc {
                    TcpCc::NewReno => "\"newreno\"".to_string(),
                    TcpCc::Dctcp => "\"dctcp\"".to_string(),
                    TcpCc::Cubic => "\"cubic\"".to_string(),
                    TcpCc::Bbr => "\"bbr\"".to_string(),
                    TcpCc::Swift => "\"swift\"".to_string(),
                    TcpCc::DctcpWith { g, initial_alpha } => {
                        format!(
                            "{{ algorithm = \"dctcp\", g = {g}, initial_alpha = {initial_alpha} }}"
                        )
                    }
                    // base_rtt has no default (htsim asserts it is set).
                    TcpCc::Strack => "{ algorithm = \"strack\", base_rtt = \"10us\" }".to_string(),
                };
                let _ = writeln!(
                    s,
                    "[transport]\ncc = {cc}\nmtu = {}\ninit_cwnd = {}\nrto_min = \"{}us\"\ndupack_threshold = {}\nclass = {}",
                    t.mtu, t.init_cwnd, t.rto_min_us, t.dupack_threshold, self.data_class
                );
                if let Some(c) = t.ack_class {
                    let _ = writeln!(s, "ack_class = {c}");
                }
                // Explicit both ways: the default is SACK with RACK-TLP (issue 43), and the
                // plain property run must keep exercising NewReno.
                let _ = writeln!(s, "recovery = \"{}\"", t.recovery);
                if let Some((count, timeout)) = t.delayed_ack {
                    let _ = writeln!(
                        s,
                        "delayed_ack = {{ count = {count}, timeout = \"{timeout}us\" }}"
                    );
                }
            }
            Transport::Rdma(r) => {
                let cc = match r.cc {
                    RdmaCc::None => "\"none\"".to_string(),
                    RdmaCc::Dcqcn { paper: false } => "\"dcqcn\"".to_string(),
                    RdmaCc::Dcqcn { paper: true } => {
                        r#"{ algorithm = "dcqcn", model = "paper" }"#.to_string()
                    }
                    RdmaCc::Timely => "\"timely\"".to_string(),
                    RdmaCc::Hpcc { eta, max_stage } => {
                        format!("{{ algorithm = \"hpcc\", eta = {eta}, max_stage = {max_stage} }}")
                    }
                    RdmaCc::Dctcp => "\"dctcp\"".to_string(),
                };
                // Rate-based DCTCP reads ECN echoes on ACKs.
                let ack_flag = r.cnp_ack_flag || matches!(r.cc, RdmaCc::Dctcp);
                let _ = writeln!(
                    s,
                    "[rdma]\ncc = {cc}\nwindow = \"{}\"\npayload = {}\nack_interval = {}\ncnp_mode = \"{}\"\n\
                     data_class = {}\nctrl_class = {}\nbase_rtt = \"{}\"\nrate_bound = {}\nrto = \"{}us\"\nback_to_chunk = {}",
                    r.window,
                    r.payload,
                    r.ack_interval,
                    if ack_flag { "ack_flag" } else { "paced" },
                    self.data_class,
                    self.ctrl_class().expect("rdma has a control class"),
                    if r.per_pair_rtt { "per_pair" } else { "global_max" },
                    r.rate_bound,
                    r.rto_us,
                    r.back_to_chunk
                );
            }
        }
        s.push('\n');
    }

    fn workload_toml(&self, s: &mut String) {
        let n = self.n_hosts();
        let w = &self.workload;
        let cdfs = cdf_names();
        let class = |c: Option<u8>| c.map_or(String::new(), |c| format!("class = {c}\n"));
        if let Some(b) = &w.burst {
            let dst = pick(b.receiver, n);
            for i in 0..b.fan_in.min(n - 1) {
                let _ = writeln!(
                    s,
                    "[[workload.flows]]\nsrc = {}\ndst = {dst}\nsize = {}\nstart = \"{}us\"\nclass = 3\n",
                    (dst + 1 + i) % n,
                    b.bytes,
                    b.start_us
                );
            }
        }
        let mut flows = w.flows.clone();
        if w.burst.is_none()
            && w.flows.is_empty()
            && w.poisson.is_empty()
            && w.incasts.is_empty()
            && w.packets.is_empty()
        {
            flows.push(FlowCase {
                src: 0,
                dst: 1,
                size: 1000,
                start_ns: 0,
                class: None,
            });
        }
        for f in &flows {
            let src = pick(f.src, n);
            let _ = writeln!(
                s,
                "[[workload.flows]]\nsrc = {src}\ndst = {}\nsize = {}\nstart = \"{}ns\"\n{}",
                pick_other(src, f.dst, n),
                f.size,
                f.start_ns,
                class(f.class)
            );
        }
        // The loads of the generators add up to at most 0.95 at any host.
        let total: f64 = w.poisson.iter().map(|p| p.load).sum();
        let scale = if total > 0.95 { 0.95 / total } else { 1.0 };
        for p in &w.poisson {
            let load = ((p.load * scale) * 1000.0).floor() / 1000.0;
            let _ = writeln!(
                s,
                "[[workload.poisson]]\nload = {}\ncdf = \"{}\"\nstart = \"{}us\"\n{}",
                load.max(0.001),
                cdfs[p.cdf % cdfs.len()],
                p.start_us,
                class(p.class)
            );
            if let Some(m) = p.hosts {
                let _ = writeln!(s, "hosts = {}", list(&subset(m, n)));
            }
            if let Some((below, c)) = p.small_flows {
                let _ = writeln!(s, "small_flows = {{ below = {below}, class = {c} }}");
            }
            if let (Some(cc), Transport::Tcp(_)) = (p.cc, &self.transport) {
                let _ = writeln!(s, "cc = \"{}\"", GROUP_CCS[cc]);
            }
        }
        for inc in &w.incasts {
            let group = inc.hosts.map_or_else(|| (0..n).collect(), |m| subset(m, n));
            let max_fan = group.len() as u32 - 1;
            let _ = writeln!(
                s,
                "[[workload.incast]]\nstart = \"{}us\"\n{}",
                inc.start_us,
                class(inc.class)
            );
            match inc.fan_in {
                FanIn::Fixed(f) => {
                    let _ = writeln!(s, "fan_in = {}", 1 + (f - 1) % max_fan);
                }
                FanIn::Mix => {
                    let _ = writeln!(s, "fan_in_mix = [[1, 0.5], [{}, 0.5]]", max_fan.min(4));
                }
            }
            match inc.size {
                Ok(b) => {
                    let _ = writeln!(s, "bytes_per_sender = {b}");
                }
                Err(c) => {
                    let _ = writeln!(s, "cdf = \"{}\"", cdfs[c % cdfs.len()]);
                }
            }
            match &inc.when {
                IncastWhen::Times(t) => {
                    let times: Vec<String> = t
                        .iter()
                        .map(|t| format!("\"{}us\"", t % self.duration_us))
                        .collect();
                    let _ = writeln!(s, "times = [{}]", times.join(", "));
                }
                IncastWhen::Load(l) => {
                    let _ = writeln!(s, "load = {l}");
                }
            }
            if let Some(r) = inc.receiver {
                let _ = writeln!(s, "receiver = {}", group[(r % group.len() as u32) as usize]);
            }
            if inc.hosts.is_some() {
                let _ = writeln!(s, "hosts = {}", list(&group));
            }
            s.push('\n');
        }
        for p in &w.packets {
            let src = pick(p.src, n);
            let _ = writeln!(
                s,
                "[[workload.packets]]\nsrc = {src}\ndst = {}\nsize = {}\nrate = \"{}Mbps\"\nprocess = \"{}\"\nstart = \"{}us\"\n{}",
                pick_other(src, p.dst, n),
                p.size,
                p.rate_mbps,
                if p.cbr { "cbr" } else { "poisson" },
                p.start_us,
                class(p.class)
            );
        }
    }
}

fn edge_toml(s: &mut String, e: &EdgeCase, n: u32) {
    let rule = match &e.rule {
        EdgeRule::Named(name) => format!("\"{name}\""),
        EdgeRule::SmartPauseFixed {
            threshold_us,
            pause_us,
        } => format!(
            "{{ algorithm = \"smart_pause_fixed\", threshold = \"{threshold_us}us\", pause = \"{pause_us}us\" }}"
        ),
        EdgeRule::OnRamp {
            base_plus_us,
            feedback,
            gradient,
        } => format!(
            "{{ algorithm = \"on_ramp\", threshold = {{ base_plus = \"{base_plus_us}us\" }}, feedback = {feedback}, concurrency = \"{}\" }}",
            if *gradient { "gradient" } else { "none" }
        ),
        EdgeRule::DynamicByHops => {
            r#"{ algorithm = "smart_pause_dynamic", threshold = { by_switch_hops = { 1 = "3us", 3 = "6us" } } }"#.to_string()
        }
    };
    let clock = match e.clock {
        "custom" => r#"{ offset = "50ns", drift_ppm = 0.5, noise = "20ns" }"#.to_string(),
        preset => format!("\"{preset}\""),
    };
    let _ = writeln!(
        s,
        "[edge]\nrule = {rule}\nclock = {clock}\nowd_sample_every = {}",
        e.owd_sample_every
    );
    if let Some(m) = e.hosts {
        let _ = writeln!(s, "hosts = {}", list(&subset(m, n)));
    }
    s.push('\n');
}
