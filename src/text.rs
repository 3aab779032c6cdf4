//! Appending formatted text to a `String`. A `String`'s `fmt::Write` cannot
//! fail, so these say so once instead of dropping a `fmt::Result` each time.

macro_rules! put {
    ($out:expr, $($arg:tt)*) => {
        $out.write_fmt(format_args!($($arg)*)).expect("a String takes any text")
    };
}

macro_rules! putln {
    ($out:expr, $($arg:tt)*) => {{
        put!($out, $($arg)*);
        $out.push('\n');
    }};
}

pub(crate) use {put, putln};
