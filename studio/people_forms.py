"""Forms of the people pages: what a person types; the rules live in projects.people."""

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.utils.translation import gettext_lazy as _

from projects.models import Role
from projects.people import INVITATION_DAYS_DEFAULT, INVITATION_DAYS_MAX


class RolesForm(forms.Form):
    roles = forms.MultipleChoiceField(choices=Role.choices, widget=forms.CheckboxSelectMultiple, label=_("Roles"))


class InvitationForm(RolesForm):
    days = forms.IntegerField(
        min_value=1, max_value=INVITATION_DAYS_MAX, initial=INVITATION_DAYS_DEFAULT, label=_("Expires after (days)")
    )
    email = forms.EmailField(
        required=False, label=_("E-mail (optional)"), help_text=_("Where mail is configured, the link is sent here.")
    )


class MembersImportForm(forms.Form):
    file = forms.FileField(
        label=_("CSV file"),
        help_text=_("Columns: username, email, name, roles (several roles separated by ; or |)."),
    )

    def text(self) -> str:
        raw = self.cleaned_data["file"].read()
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise forms.ValidationError(_("The file is not UTF-8 text.")) from None

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > 2 * 1024 * 1024:
            raise forms.ValidationError(_("The file is larger than 2 MB."))
        try:
            upload.read().decode("utf-8-sig")
        except UnicodeDecodeError:
            raise forms.ValidationError(_("The file is not UTF-8 text; save it as CSV UTF-8.")) from None
        upload.seek(0)
        return upload


class AccountForm(forms.Form):
    username = forms.CharField(max_length=150, label=_("Username"))
    name = forms.CharField(max_length=150, required=False, label=_("Name"))
    email = forms.EmailField(required=False, label=_("E-mail"))


class SignUpForm(AccountForm):
    """A new account through an invitation; the password passes Django's validators."""

    password1 = forms.CharField(
        label=_("Password"), strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    password2 = forms.CharField(
        label=_("Password again"), strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )

    def clean(self):
        data = super().clean()
        p1, p2 = data.get("password1"), data.get("password2")
        if p1 and p2 and p1 != p2:
            self.add_error("password2", _("The two passwords differ."))
        elif p1:
            probe = get_user_model()(
                username=data.get("username", ""), email=data.get("email", ""), first_name=data.get("name", "")
            )
            try:
                password_validation.validate_password(p1, user=probe)
            except forms.ValidationError as exc:
                self.add_error("password1", exc)
        return data
