//! The API's own copy of a plain core struct: the same fields, with the
//! derives that make it JSON and an OpenAPI schema, and a conversion each
//! way (the CLI reads answers back into the core's types). A field renamed
//! in the core then fails to compile here instead of changing the API.

/// Declares the API struct (its derives and docs as written) and `From`
/// both ways with the core's struct `$core`, field by field: each field's
/// value goes through `Carry`: itself, or an `Option`/`Vec` of another
/// mirrored type (`carry_pairs!`).
macro_rules! mirror {
    (
        $(#[$meta:meta])*
        pub struct $name:ident = $core:path {
            $($(#[$fmeta:meta])* pub $field:ident: $ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl From<$core> for $name {
            fn from(c: $core) -> $name {
                use $core as Core;
                let Core { $($field,)* } = c;
                $name { $($field: $crate::wire::api::mirror::Carry::carry($field),)* }
            }
        }

        impl From<$name> for $core {
            fn from(w: $name) -> $core {
                use $core as Core;
                let $name { $($field,)* } = w;
                Core { $($field: $crate::wire::api::mirror::Carry::carry($field),)* }
            }
        }
    };
}

/// A field's value from one side to the other: itself for the types both
/// share, `Into` inside an `Option` or a `Vec` of mirrored ones.
pub trait Carry<T> {
    fn carry(self) -> T;
}

impl<T> Carry<T> for T {
    fn carry(self) -> T {
        self
    }
}

/// `Option` and `Vec` of a mirrored pair, both ways.
macro_rules! carry_pairs {
    ($($a:ty => $b:ty),* $(,)?) => {$(
        impl $crate::wire::api::mirror::Carry<Option<$b>> for Option<$a> {
            fn carry(self) -> Option<$b> {
                self.map(Into::into)
            }
        }
        impl $crate::wire::api::mirror::Carry<Option<$a>> for Option<$b> {
            fn carry(self) -> Option<$a> {
                self.map(Into::into)
            }
        }
        impl $crate::wire::api::mirror::Carry<Vec<$b>> for Vec<$a> {
            fn carry(self) -> Vec<$b> {
                self.into_iter().map(Into::into).collect()
            }
        }
        impl $crate::wire::api::mirror::Carry<Vec<$a>> for Vec<$b> {
            fn carry(self) -> Vec<$a> {
                self.into_iter().map(Into::into).collect()
            }
        }
    )*};
}
