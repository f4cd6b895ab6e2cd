//! Columnar result tables, handed to Python (and to Parquet) without row objects.

/// One column of a result table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    U8(Vec<u8>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U8(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The numpy dtype string of this column (little-endian).
    pub fn dtype(&self) -> &'static str {
        match self {
            Column::U8(_) => "<u1",
            Column::U32(_) => "<u4",
            Column::U64(_) => "<u8",
            Column::I64(_) => "<i8",
            Column::F64(_) => "<f8",
        }
    }
    /// The raw little-endian bytes of the column.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            Column::U8(v) => v.clone(),
            Column::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Column::U64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Column::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Column::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }
}

/// A named set of equal-length columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn push(&mut self, name: &str, col: Column) {
        if let Some((_, first)) = self.columns.first() {
            assert_eq!(
                first.len(),
                col.len(),
                "column {name} has a different length"
            );
        }
        self.columns.push((name.to_string(), col));
    }
    /// The rows in `order` (indices of this table's rows).
    pub fn rows_in(&self, order: &[usize]) -> Table {
        fn pick<T: Copy>(v: &[T], order: &[usize]) -> Vec<T> {
            order.iter().map(|&i| v[i]).collect()
        }
        let columns = self.columns.iter().map(|(name, column)| {
            let column = match column {
                Column::U8(v) => Column::U8(pick(v, order)),
                Column::U32(v) => Column::U32(pick(v, order)),
                Column::U64(v) => Column::U64(pick(v, order)),
                Column::I64(v) => Column::I64(pick(v, order)),
                Column::F64(v) => Column::F64(pick(v, order)),
            };
            (name.clone(), column)
        });
        Table {
            columns: columns.collect(),
        }
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn u64s(&self, name: &str) -> &[u64] {
        match self.get(name) {
            Some(Column::U64(v)) => v,
            _ => panic!("no u64 column {name}"),
        }
    }
    pub fn i64s(&self, name: &str) -> &[i64] {
        match self.get(name) {
            Some(Column::I64(v)) => v,
            _ => panic!("no i64 column {name}"),
        }
    }
    pub fn f64s(&self, name: &str) -> &[f64] {
        match self.get(name) {
            Some(Column::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }
    pub fn u32s(&self, name: &str) -> &[u32] {
        match self.get(name) {
            Some(Column::U32(v)) => v,
            _ => panic!("no u32 column {name}"),
        }
    }
    pub fn u8s(&self, name: &str) -> &[u8] {
        match self.get(name) {
            Some(Column::U8(v)) => v,
            _ => panic!("no u8 column {name}"),
        }
    }
}
